"""Markdown tables: the runs, one table per family, operator, type and level, AoS/SoA, overhead."""

import os

from .names import (MATMUL_REFERENCES, REDUCE_REFERENCES, flop_key, fmt, fmt_ratio, matmul_kernels, matmul_name,
                    matmul_shapes, pow2, rate, ratio, reduce_kernels, reduce_name, reduce_sizes, size_of,
                    sweep_name, table, unique)


def runs_table(runs):
    rows = []
    for backend, run in runs.items():
        c = run.context
        details = c.get("tandem_device_details", "")
        rows.append((backend, run.device(), details, run.date(), "`%s`" % c.get("executable", "?"),
                     os.path.basename(run.path)))
    return table(["backend", "device", "details", "date", "executable", "file"], rows)


def reduce_tables(run, level):
    out = []
    kernels = reduce_kernels(run, level)
    for dtype in ("float", "double", "int32"):
        sizes = reduce_sizes(run, level, dtype)
        if not sizes:
            continue
        for op in ("sum", "min", "max"):
            rows = []
            for k in kernels:
                cells = []
                for n in sizes:
                    r = run.results.get(reduce_name(run, level, k, op, dtype, n))
                    cells.append("-" if r is None else "%s (%s%%)" % (fmt(r.get("GB/s")), fmt(r.get("pct_sweep"))))
                if any(c != "-" for c in cells):
                    rows.append(["`%s`" % k] + cells)
            if not rows:
                continue
            sweep = []
            for n in sizes:
                v = rate(run, sweep_name(run, level, dtype, n))
                sweep.append(fmt(v))
            rows.append(["*%s*" % sweep_name(run, level, dtype, sizes[0]).rsplit("/", 2)[0]] + sweep)
            if level == "engine" and op == "sum":
                for base, *_ in REDUCE_REFERENCES.get(run.backend, ()):
                    cells = [fmt(rate(run, "baseline/%s/sum/%s/n:%d" % (base, dtype, n))) for n in sizes]
                    if any(c != "-" for c in cells):
                        rows.append(["*baseline/%s*" % base] + cells)
            out.append("#### %s %s, %s level: GB/s (%% of the read sweep)\n\n" % (op, dtype, level))
            out.append(table(["stage"] + ["n = %s" % pow2(n) for n in sizes], rows))
            out.append("\n")
    return "".join(out)


def matmul_tables(run, level):
    out = []
    key = flop_key(run)
    for dtype in ("float", "double"):
        kernels = matmul_kernels(run, level, dtype)
        shapes = matmul_shapes(run, level, dtype)
        if not kernels:
            continue
        rows = []
        for k in kernels:
            cells = [fmt(rate(run, matmul_name(run, level, k, dtype, s), key)) for s in shapes]
            rows.append(["`%s`" % k] + cells)
        if level == "engine":
            for base, _ in MATMUL_REFERENCES.get(run.backend, ()):
                cells = [fmt(rate(run, "baseline/%s/%s/%s" % (base, dtype, s), key)) for s in shapes]
                if any(c != "-" for c in cells):
                    rows.append(["*baseline/%s*" % base] + cells)
        out.append("#### matmul %s, %s level: %s\n\n" % (dtype, level, key))
        out.append(table(["stage"] + shapes, rows))
        out.append("\n")
    return "".join(out)


def strided_table(run):
    prefix = "strided/%s/" % run.backend
    names = run.names(prefix)
    if not names:
        return ""
    kernels = unique(n.split("/")[2] for n in names)
    n = size_of(names[0])
    rows = []
    for k in kernels:
        aos = rate(run, "%s%s/aos_field/float/n:%d" % (prefix, k, n))
        soa = rate(run, "%s%s/soa/float/n:%d" % (prefix, k, n))
        rows.append(["`%s`" % k, fmt(aos), fmt(soa), fmt_ratio(ratio(aos, soa))])
    return ("#### AoS field (stride 2) against SoA, float sum, n = %s: GB/s of the useful bytes\n\n" % pow2(n) +
            table(["stage", "aos_field", "soa", "aos / soa"], rows) + "\n")


def overhead_table(run):
    engine = run.get("overhead/%s/engine/sum/float/n:16" % run.backend, "time_ns")
    raw = run.get("overhead/%s/raw_backend/sum/float/n:16" % run.backend, "time_ns")
    if engine is None and raw is None:
        return ""
    diff = None if engine is None or raw is None else engine - raw
    return ("#### Engine overhead, sum of 16 floats: ns per call\n\n" +
            table(["engine.sum()", "BackendImpl::reduce()", "difference"], [[fmt(engine), fmt(raw), fmt(diff)]]) +
            "\n")


def auto_below_table(below, required):
    if not below:
        return "No case of \"auto\" below %s× the fastest stage.\n" % required
    rows = [[b, lvl, case, stage or "-", fastest, fmt_ratio(r)] for (b, lvl, r, case, stage, fastest) in below]
    return table(["backend", "level", "case", "auto ran", "fastest", "auto / fastest"], rows)


def run_tables(run, run_levels):
    """Everything of one backend after its heading."""
    md = []
    if run.errors:
        rows = [["`%s`" % n, e] for n, e in run.errors.items()]
        md.append("#### Benchmarks that reported an error\n\n" + table(["benchmark", "error"], rows) + "\n")
    for level in run_levels:
        md.append(reduce_tables(run, level))
        md.append(matmul_tables(run, level))
    md.append(strided_table(run))
    md.append(overhead_table(run))
    return "".join(md)
