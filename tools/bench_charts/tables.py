"""Markdown tables: the runs, one table per family, operator, type and level, AoS/SoA, overhead."""

import os

from .names import (MATMUL_REFERENCES, REDUCE_REFERENCES, flop_key, fmt, fmt_ratio, matmul_kernels, matmul_name,
                    matmul_shapes, pow2, rate, ratio, reduce_kernels, reduce_name, reduce_sizes, size_of,
                    sweep_name, table, unique)


def suite_of(context):
    """The benchmark binary's name (the context's executable without its folder)."""
    return os.path.basename(context.get("executable", "?"))


def device_of(backend, context):
    """The run's device as the tables name it: a CPU with its core count."""
    device = context.get("tandem_device", "?")
    if backend == "cpu":
        device += " (%s cores)" % context.get("tandem_compute_units", context.get("num_cpus", "?"))
    return device


def runs_table(runs, multi=()):
    rows = []
    for backend, run in runs.items():
        for path, c in run.sources:
            rows.append((backend, device_of(backend, c), c.get("tandem_device_details", ""), c.get("date", "?")[:10],
                         "`%s`" % suite_of(c), os.path.basename(path), c.get("tandem_run_note", "")))
    for m in multi:
        rows.append(("cuda", "%d GPUs" % max(multi_gpu_counts(m)), "", m.date(), "`%s`" % suite_of(m.context),
                     os.path.basename(m.path), m.context.get("tandem_run_note", "")))
    return table(["backend", "device", "details", "date", "suite", "file", "how it was run"], rows)


def rate_cell(r):
    """GB/s with the percentage of the read sweep: "4369 (100%)"."""
    return "-" if r is None else "%s (%s%%)" % (fmt(r.get("GB/s")), fmt(r.get("pct_sweep")))


def reduce_table(run, level, op, dtype):
    """One operator and type at every size: a row per stage, then the read sweep (and on the CPU, for
    sums, the plain baselines). "" when the run has none."""
    sizes = reduce_sizes(run, level, dtype)
    rows = []
    for k in reduce_kernels(run, level):
        cells = [rate_cell(run.results.get(reduce_name(run, level, k, op, dtype, n))) for n in sizes]
        if any(c != "-" for c in cells):
            rows.append(["`%s`" % k] + cells)
    if not rows:
        return ""
    sweep = [fmt(rate(run, sweep_name(run, level, dtype, n))) for n in sizes]
    rows.append(["*%s*" % sweep_name(run, level, dtype, sizes[0]).rsplit("/", 2)[0]] + sweep)
    if level == "engine" and op == "sum":
        for base, *_ in REDUCE_REFERENCES.get(run.backend, ()):
            cells = [fmt(rate(run, "baseline/%s/sum/%s/n:%d" % (base, dtype, n))) for n in sizes]
            if any(c != "-" for c in cells):
                rows.append(["*baseline/%s*" % base] + cells)
    return table(["stage"] + ["n = %s" % pow2(n) for n in sizes], rows)


def reduce_tables(run, level):
    out = []
    for dtype in ("float", "double", "int32"):
        for op in ("sum", "min", "max"):
            t = reduce_table(run, level, op, dtype)
            if t:
                out.append("#### %s %s, %s level: GB/s (%% of the read sweep)\n\n" % (op, dtype, level))
                out.append(t + "\n")
    return "".join(out)


def reduce_grid(run, level, n=None):
    """Every stage against every operator x type (sum/min/max x float/double/int32) at one size (the
    largest float size by default): GB/s (% of the read sweep)."""
    sizes = reduce_sizes(run, level, "float")
    if not sizes:
        return ""
    n = n or sizes[-1]
    cases = [(op, dtype) for dtype in ("float", "double", "int32") for op in ("sum", "min", "max")]
    rows = []
    for k in reduce_kernels(run, level):
        cells = [rate_cell(run.results.get(reduce_name(run, level, k, op, dtype, n))) for op, dtype in cases]
        if any(c != "-" for c in cells):
            rows.append(["`%s`" % k] + cells)
    rows.append(["*%s*" % sweep_name(run, level, "float", n).rsplit("/", 2)[0]] +
                [fmt(rate(run, sweep_name(run, level, dtype, n))) for _, dtype in cases])
    return table(["stage"] + ["%s %s" % c for c in cases], rows)


def matmul_table(run, level, dtype):
    key = flop_key(run)
    kernels = matmul_kernels(run, level, dtype)
    shapes = matmul_shapes(run, level, dtype)
    if not kernels:
        return ""
    rows = []
    for k in kernels:
        cells = [fmt(rate(run, matmul_name(run, level, k, dtype, s), key)) for s in shapes]
        rows.append(["`%s`" % k] + cells)
    if level == "engine":
        for base, _ in MATMUL_REFERENCES.get(run.backend, ()):
            cells = [fmt(rate(run, "baseline/%s/%s/%s" % (base, dtype, s), key)) for s in shapes]
            if any(c != "-" for c in cells):
                rows.append(["*baseline/%s*" % base] + cells)
    return table(["stage"] + shapes, rows)


def matmul_tables(run, level):
    out = []
    for dtype in ("float", "double"):
        t = matmul_table(run, level, dtype)
        if t:
            out.append("#### matmul %s, %s level: %s\n\n" % (dtype, level, flop_key(run)))
            out.append(t + "\n")
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
    once = run.get("overhead/%s/engine/sum/float/n:16" % run.backend, "iterations") == 1
    return ("#### Engine overhead, sum of 16 floats: ns per call\n\n" +
            table(["engine.sum()", "BackendImpl::reduce()", "difference"], [[fmt(engine), fmt(raw), fmt(diff)]]) +
            ("\n`engine.sum()` ran one iteration in this run: its time includes start-up costs.\n" if once else "") +
            "\n")


def gpu_overhead_table(run):
    """The CUDA engine's cost per call: a synchronous engine.sum() of 16 floats, the same reduction through
    the backend directly, the floor of any synchronous call, and the host time to enqueue a sum_into."""
    rows = []
    for name, what in (("overhead/cuda/engine/sum/float/n:16", "`engine.sum()` of 16 floats in a Buffer"),
                       ("overhead/cuda/raw_backend/sum/float/n:16", "the same through `BackendImpl::reduce()`"),
                       ("overhead/cuda/floor", "floor: one tiny kernel, an 8-byte copy, a stream synchronisation"),
                       ("overhead/cuda/sum_into/enqueue/float/n:16", "enqueueing a `sum_into` (host time)")):
        t = run.get(name, "time_ns")
        # (A single iteration is the first call, start-up costs included: not the cost of a call, left out.)
        if t is not None and run.get(name, "iterations") != 1:
            rows.append([what, fmt(t / 1e3)])
    return table(["call", "µs"], rows) if rows else ""


def per_table(run):
    """Per-row and per-column sums on the GPU against the vendor call on the same matrix: CUB's
    DeviceSegmentedReduce::Sum for rows, cuBLAS Sgemv with a vector of ones for columns (GB/s of the
    matrix's bytes)."""
    vendor = {"row": ("cub_segmented", "CUB segmented sum"), "col": ("cublas_gemv", "cuBLAS Sgemv")}
    rows = []
    for per in ("row", "col"):
        prefix = "per/%s/%s/sum/float/" % (per, run.backend)
        for shape in [n[len(prefix):] for n in run.names(prefix)]:
            ours = rate(run, prefix + shape)
            det = rate(run, "per/%s/%s/deterministic/sum/float/%s" % (per, run.backend, shape))
            base, label = vendor[per]
            theirs = rate(run, "per/%s/baseline/%s/sum/float/%s" % (per, base, shape))
            rows.append(["%s of %s" % ("rows" if per == "row" else "columns", shape.replace("x", " x ")), fmt(ours),
                         fmt(det), "%s %s" % (label, fmt(theirs)), fmt_ratio(ratio(ours, theirs)),
                         fmt_ratio(ratio(det, theirs))])
    if not rows:
        return ""
    return table(["float sums", "tandem", "deterministic", "vendor", "tandem / vendor", "deterministic / vendor"],
                 rows)


def forms_table(run):
    """GEMM forms (transposes, alpha/beta, batches) through the engine against cuBLAS called directly with
    the same form (TFLOP/s)."""
    names = run.names("forms/%s/" % run.backend)
    if not names:
        return ""
    kernels = unique(n.split("/")[2] for n in names)
    cases = unique("/".join(n.split("/")[3:]) for n in names)
    rows = []
    for case in cases:
        theirs = rate(run, "baseline/cublas/%s" % case, "TFLOP/s")
        cells = []
        for k in kernels:
            ours = rate(run, "forms/%s/%s/%s" % (run.backend, k, case), "TFLOP/s")
            cells += [fmt(ours), fmt_ratio(ratio(ours, theirs))]
        rows.append(["`%s`" % case] + cells + [fmt(theirs)])
    header = ["form / type / m x k x n"]
    for k in kernels:
        header += ["`%s`" % k, "%s / cuBLAS" % k]
    return table(header + ["cuBLAS"], rows)


def float16_table(run):
    """Stored bfloat16 / half inputs through the engine against the vendor call on the same data:
    cublasGemmEx (strided batched for batches) for products (TFLOP/s), CUB's TransformReduce to float for
    sums (GB/s of the 16-bit input)."""
    names = run.names("float16/%s/" % run.backend)
    if not names:
        return ""
    rows = []
    for case in unique("/".join(n.split("/")[3:]) for n in names):
        matmul = case.startswith("matmul/")
        key = "TFLOP/s" if matmul else "GB/s"
        if case.startswith("matmul/float/"):  # float data as tf32: against cuBLAS's TF32 mode
            vendor, theirs = "cublas_tf32", rate(run, "float16/%s/cublas_tf32/%s" % (run.backend, case), key)
        else:
            vendor = "cublasGemmEx" if matmul else "CUB"
            theirs = rate(run, ("baseline/cublas_gemm_ex/%s" if matmul else "baseline/cub/%s") % case, key)
        for k in unique(n.split("/")[2] for n in names):
            if k == vendor:
                continue
            ours = rate(run, "float16/%s/%s/%s" % (run.backend, k, case), key)
            if ours is not None:
                rows.append(["`%s`" % case, "`%s`" % k, fmt(ours), "%s %s" % (vendor, fmt(theirs)),
                             fmt_ratio(ratio(ours, theirs)), key])
    text = table(["case", "stage", "tandem", "vendor", "tandem / vendor", "unit"], rows)
    if not any(n.split("/")[3] != "matmul" for n in names):
        text += "\nThe runs have no 16-bit sums (against CUB's TransformReduce): products only.\n"
    return text


HOPPER_DTYPES = (("bfloat16", "bfloat16"), ("float16", "float16"), ("float", "float as tf32"))


def hopper_table(run):
    """The 16-bit and tf32 products of the float16/ family: per type and shape the fastest own stage against
    cuBLAS (cublasGemmEx, strided batched for batches, on stored 16-bit data; cublas_tf32 for float), and
    auto (for float, at tf32 precision) against the fastest own stage (TFLOP/s)."""
    prefix = "float16/%s/" % run.backend
    names = [n for n in run.names(prefix) if n.split("/")[3] == "matmul"]
    if not names:
        return ""
    own = [k for k in unique(n.split("/")[2] for n in names) if run.is_own("matmul", k)]
    rows = []
    for dtype, shown in HOPPER_DTYPES:
        shapes = unique("/".join(n.split("/")[5:]) for n in names if n.split("/")[4] == dtype)
        for shape in shapes:
            rates = [(rate(run, "%s%s/matmul/%s/%s" % (prefix, k, dtype, shape), "TFLOP/s"), k) for k in own]
            rates = [x for x in rates if x[0]]
            if not rates:
                continue
            best = max(rates)
            if dtype == "float":
                vendor = "cublas_tf32"
                theirs = rate(run, "%scublas_tf32/matmul/%s/%s" % (prefix, dtype, shape), "TFLOP/s")
            else:
                vendor = "cublasGemm%sEx" % ("StridedBatched" if shape.startswith("batch:") else "")
                theirs = rate(run, "baseline/cublas_gemm_ex/matmul/%s/%s" % (dtype, shape), "TFLOP/s")
            # (float: auto where MatmulOptions::precision is tf32, tf32/<backend>/auto/...; at full precision auto
            # runs no tf32 stage)
            auto_prefix = "tf32/%s/" % run.backend if dtype == "float" else prefix
            auto_name = auto_prefix + "auto/matmul/%s/%s" % (dtype, shape)
            auto = rate(run, auto_name, "TFLOP/s")
            what = shape
            if shape.startswith("batch:"):
                count, dims = shape[len("batch:"):].split("/")
                what = "batch of %s x %s" % (count, dims)
            rows.append([shown, what, "`%s`" % best[1], fmt(best[0]), "%s %s" % (vendor, fmt(theirs)),
                         fmt_ratio(ratio(best[0], theirs)), fmt_ratio(ratio(auto, best[0]))])
    return table(["type", "m x k x n", "best own stage", "TFLOP/s", "cuBLAS", "best / cuBLAS",
                  "auto / best own stage"], rows)


def host_table(run):
    """A sum of host data (a std::vector) through the CUDA engine, against the host-to-device copies."""
    names = run.names("host/")
    if not names:
        return ""
    n = size_of(names[0])
    pinned = rate(run, "baseline/pinned_h2d/n:%d" % n)
    rows = []
    for name, what in (("host/cuda/sum/float/n:%d",
                        "CUDA engine, `auto` (the GPU and the CPU's cores share the pieces)"),
                       ("host/cuda/single_pass/sum/float/n:%d",
                        "CUDA engine, `single_pass` (every piece staged to the GPU)"),
                       ("host/cpu/sum/float/n:%d", "CPU engine"),
                       ("baseline/pinned_h2d/n:%d", "`cudaMemcpyAsync` from pinned memory"),
                       ("baseline/pageable_h2d/n:%d", "`cudaMemcpyAsync` from the vector itself (pageable)")):
        v = rate(run, name % n)
        if v is not None:
            rows.append([what, fmt(v), fmt_ratio(ratio(v, pinned))])
    return table(["sum of %s floats in host memory" % pow2(n), "GB/s", "/ pinned copy"], rows)


def multi_gpu_counts(m):
    return sorted({int(n.rsplit("gpus:", 1)[1]) for n in m.results if "gpus:" in n})


MULTI_CASES = (("multi/sum/buffer/float/", "sum of {pow2} floats in a Buffer", "GB/s"),
               ("multi/sum_det/buffer/float/", "the same, deterministic", "GB/s"),
               ("multi/sum/host/float/", "sum of {pow2} floats in host memory", "GB/s"),
               ("multi/matmul/float/", "float GEMM {n}^3 on Buffers, B sent to each GPU included", "TFLOP/s"),
               ("multi/matmul/bfloat16/", "bfloat16 GEMM {n}^3 on Buffers", "TFLOP/s"))


def multi_table(m):
    """One engine over every GPU of the machine against one GPU, same work."""
    counts = multi_gpu_counts(m)
    if len(counts) < 2:
        return ""
    one, many = counts[0], counts[-1]
    rows = []
    for prefix, what, key in MULTI_CASES:
        for size in unique(n[len(prefix):].split("/")[0] for n in m.results if n.startswith(prefix)):
            a = m.results.get("%s%s/gpus:%d" % (prefix, size, one), {}).get(key)
            b = m.results.get("%s%s/gpus:%d" % (prefix, size, many), {}).get(key)
            rows.append([what.format(n=size, pow2=pow2(int(size))), key, fmt(a), fmt(b), fmt_ratio(ratio(b, a))])
    return table(["case", "unit", "%d GPU" % one, "%d GPUs" % many, "ratio"], rows)


def deterministic_table(runs, multi=()):
    """What deterministic mode costs, from every pair of benchmarks that differ only in it: (case, unit,
    deterministic rate, default rate, ratio)."""
    rows = []
    for run in runs.values():
        where = "GPU" if run.backend == "cuda" else "CPU"
        for name in run.names("matmul_det/%s/" % run.backend):  # matmul_det/<backend>/<case>/<type>/<shape>/<mode>
            if name.endswith("/deterministic"):
                base = name[: -len("/deterministic")]
                _, _, case, dtype, shape = base.split("/")
                key = flop_key(run)
                rows.append(["%s %s GEMM %s (%s)" % (where, dtype, shape, case), key, rate(run, name, key),
                             rate(run, base + "/default", key)])
        for per in ("row", "col"):
            what = "rows" if per == "row" else "columns"
            for prefix, det_prefix in (("per/%s/%s/sum/float/" % (per, run.backend),
                                        "per/%s/%s/deterministic/sum/float/" % (per, run.backend)),
                                       ("per/%s/%s/sum/float/" % (run.backend, per),
                                        "per/%s/%s/deterministic/sum/float/" % (run.backend, per))):
                for shape in [n[len(prefix):] for n in run.names(prefix)]:
                    rows.append(["%s float sums of the %s of %s" % (where, what, shape.replace("x", " x ")), "GB/s",
                                 rate(run, det_prefix + shape), rate(run, prefix + shape)])
        if run.backend == "cuda":
            # the kernel level where the run has products there, else the engine level
            lvl = "kernel" if matmul_kernels(run, "kernel", "float") else "engine"
            shapes = [s for s in matmul_shapes(run, lvl, "float") if "x" not in s and
                      rate(run, matmul_name(run, lvl, "register_tiled", "float", s), "TFLOP/s") and
                      rate(run, matmul_name(run, lvl, "auto", "float", s), "TFLOP/s")]
            shapes.sort(key=lambda s: (int(s) & (int(s) - 1) == 0, int(s)))  # the largest power of two last
            for s in shapes[-1:]:
                rows.append(["GPU float GEMM %s^3: `register_tiled` (what deterministic mode runs) against `auto`" % s,
                             "TFLOP/s", rate(run, matmul_name(run, lvl, "register_tiled", "float", s), "TFLOP/s"),
                             rate(run, matmul_name(run, lvl, "auto", "float", s), "TFLOP/s")])
    for m in multi:
        for name in sorted(n for n in m.results if n.startswith("multi/sum_det/")):
            gpus = int(name.rsplit("gpus:", 1)[1])
            size = int(name.split("/")[4])
            plain = m.results.get(name.replace("/sum_det/", "/sum/"), {}).get("GB/s")
            rows.append(["sum of %s floats in a Buffer, %d GPU%s" % (pow2(size), gpus, "s" if gpus > 1 else ""), "GB/s",
                         m.results[name].get("GB/s"), plain])
    if not rows:
        return ""
    return table(["case", "unit", "deterministic", "default", "deterministic / default"],
                 [[c, u, fmt(d), fmt(b), fmt_ratio(ratio(d, b))] for c, u, d, b in rows])


def auto_below_table(below, required):
    if not below:
        return "No case of \"auto\" below %s of the fastest stage.\n" % required
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
    for title, make in (("GPU engine overhead", gpu_overhead_table), ("Per row and per column", per_table),
                        ("GEMM forms against cuBLAS", forms_table), ("Stored 16-bit inputs", float16_table),
                        ("Hopper stages against cuBLAS", hopper_table),
                        ("Host data", host_table)):
        t = make(run) if run.backend == "cuda" else ""
        if t:
            md.append("#### %s\n\n%s\n" % (title, t))
    return "".join(md)


def types_table(run):
    """Every element type over the same bytes on "auto" (types/<backend>/<op>/<type>/bytes:<B>): GB/s and the
    ratio to float's for the same op, a row per type. "" when the run has none."""
    prefix = "types/%s/" % run.backend
    names = run.names(prefix)
    if not names:
        return ""
    ops = unique(n[len(prefix):].split("/")[0] for n in names)
    dtypes = unique(n[len(prefix):].split("/")[1] for n in names)
    nbytes = int(names[0].rsplit(":", 1)[1])
    gbs = lambda op, t: rate(run, "%s%s/%s/bytes:%d" % (prefix, op, t, nbytes))  # noqa: E731
    rows = [["`%s`" % t] + ["%s (%s)" % (fmt(gbs(op, t)), fmt_ratio(ratio(gbs(op, t), gbs(op, "float")))) for op in ops]
            for t in dtypes]
    return ("GB/s (ratio to float's for the same operator), engine level, `auto`, %d MiB of each type, %s:\n\n%s" %
            (nbytes >> 20, device_of(run.backend, run.context), table(["type"] + ops, rows)))

