"""Evaluates the target rows of targets.json (data, no code per target) against the runs."""

import json
import os

from .names import (cases_label, flop_key, fmt, fmt_ratio, levels, matmul_kernels, matmul_name, matmul_shapes,
                    parse_size, pow2, rate, ratio, reduce_kernels, reduce_name, reduce_sizes, sweep_name, table)

TARGETS_JSON = os.path.join(os.path.dirname(os.path.abspath(__file__)), "targets.json")


def load_targets(path=TARGETS_JSON):
    with open(path) as f:
        return json.load(f)


class Targets:
    def __init__(self):
        self.rows = []

    def add(self, target, level, measured, required, note=""):
        """measured: a ratio (None: not in the inputs); required: the least ratio that meets the target,
        or ("<=", limit) for an upper bound."""
        if measured is None:
            status = "not measured"
            shown = "-"
        elif isinstance(required, tuple):
            status = "meets" if measured <= required[1] else "misses"
            shown = fmt(measured)
        else:
            status = "meets" if measured >= required else "misses"
            shown = fmt_ratio(measured)
        req = ("≤ %s" % fmt(required[1])) if isinstance(required, tuple) else ("≥ %.2f×" % required)
        self.rows.append((target, level, shown, req, status, note))

    def markdown(self):
        """The measured ratios (a results page states what was measured; the thresholds of targets.json
        decide only which cases tables.md lists)."""
        return table(["comparison", "level", "measured", "case"], [(r[0], r[1], r[2], r[5]) for r in self.rows])


def evaluate(runs, spec):
    """The targets table and the cases where "auto" is below its required ratio."""
    t, below = Targets(), []
    for group in spec["groups"]:
        if "auto" in group:
            below += auto_rows(t, runs, group["auto"], spec["notes"])
            continue
        backend = group["backend"]
        run = runs.get(backend)
        for level in group["levels"]:
            if run is None:
                missing = spec["notes"]["no_run"]
            else:
                missing = "" if level in levels(run) else spec["notes"]["no_level"].get(level, "")
            for target in group["targets"]:
                target_row(t, run, level, target, missing.format(backend=backend))
    return t, below


def required_of(target):
    r = target["required"]
    return ("<=", r["at_most"]) if isinstance(r, dict) else r


# ---- One target row --------------------------------------------------------------------------------


def expand_cases(run, level, cases):
    """Every case (dtype, op, n, shape) in that order; None where "largest" has no size."""
    sizes = []
    for v in cases.get("n", [None]):
        if v == "largest":
            found = reduce_sizes(run, level, "float") if run else []
            if not found:
                return None
            v = found[-1]
        sizes.append(None if v is None else parse_size(v))
    out = []
    for dtype in cases.get("dtype", [None]):
        shapes = cases.get("shape", [None])
        if shapes == ["all"]:
            shapes = matmul_shapes(run, level, dtype) if run else []
        for op in cases.get("op", [None]):
            out += [dict(dtype=dtype, op=op, n=n, shape=s) for n in sizes for s in shapes]
    return out


def fields(case):
    return dict(case, n=None if case["n"] is None else pow2(case["n"]))


def kernel_rate(run, level, family, kernel, case):
    if family == "reduce":
        return rate(run, reduce_name(run, level, kernel, case["op"], case["dtype"], case["n"]))
    return rate(run, matmul_name(run, level, kernel, case["dtype"], case["shape"]), flop_key(run))


def numerator(run, level, target, case):
    """(rate, the stage it names or "") of a case."""
    family, num = target["family"], target["numerator"]
    if run is None:
        return None, ""
    if "kernel" in num:
        return kernel_rate(run, level, family, num["kernel"], case), ""
    if "benchmark" in num:
        return benchmark_rate(run, target, num["benchmark"], case), ""
    if "best_benchmark" in num:
        return best_benchmark(run, target, num["best_benchmark"], case)
    # The fastest own stage (not "auto", not a vendor baseline) of the precision asked for.
    want = num["best"].get("precision")
    kernels = reduce_kernels(run, level) if family == "reduce" else matmul_kernels(run, level, case["dtype"])
    best = None
    for k in kernels:
        if not run.is_own(family, k) or (want and run.precision(family, k) != want):
            continue
        v = kernel_rate(run, level, family, k, case)
        if v and (best is None or v > best[0]):
            best = (v, k)
    return (best[0], best[1]) if best else (None, "")


def denominator(run, level, target, case):
    den = target["denominator"]
    if run is None:
        return None
    if "kernel" in den:
        return kernel_rate(run, level, target["family"], den["kernel"], case)
    if "best_benchmark" in den:
        return best_benchmark(run, target, den["best_benchmark"], case)[0]
    if den.get("read_sweep"):
        return rate(run, sweep_name(run, level, case["dtype"], case["n"]))
    return benchmark_rate(run, target, den["benchmark"], case)


def benchmark_rate(run, target, pattern, case):
    """The rate of the benchmark named by a pattern with {backend} {dtype} {op} {n} {shape}: GB/s for the
    reduce family, FLOP/s for matmul."""
    key = "GB/s" if target["family"] == "reduce" else flop_key(run)
    return rate(run, pattern.format(backend=run.backend, **fields(case)), key)


def best_benchmark(run, target, pattern, case):
    """(rate, stage) of the fastest own stage (not auto, not a vendor baseline) among the benchmarks named by
    a pattern with {kernel}; (None, "") when none was measured."""
    best = None
    for kind, k in run.kernels:
        if kind != target["family"] or not run.is_own(kind, k):
            continue
        v = rate(run, pattern.format(backend=run.backend, kernel=k, **fields(case)),
                 "GB/s" if target["family"] == "reduce" else flop_key(run))
        if v and (best is None or v > best[0]):
            best = (v, k)
    return best if best else (None, "")


def target_row(t, run, level, target, missing):
    """One row; `missing`: the note for a value the inputs lack (no run, no such level)."""
    required = required_of(target)
    label_fields = {}
    if "difference" in target:
        names = [n.format(backend=run.backend) for n in target["difference"]] if run else []
        a, b = [run.get(n, target["key"]) for n in names] if run else (None, None)
        measured = None if a is None or b is None else a - b
        detail = "" if measured is None else target["note"].format(a=fmt(a), b=fmt(b))
        count = 0
    else:
        cases = expand_cases(run, level, target["cases"])
        if cases is None:  # "largest" and the run has no sizes
            alt = target.get("if_no_size")
            if alt is not None:
                t.add(alt["label"], level, None, required, missing if run is None else alt["note"])
            return
        for axis in ("dtype", "op", "n", "shape"):
            values = {fields(c)[axis] for c in cases}
            if len(values) == 1:
                label_fields[axis] = values.pop()
        measured, detail, measured_cases = None, "", []
        for case in cases:
            num, stage = numerator(run, level, target, case)
            r = ratio(num, denominator(run, level, target, case))
            if "worst" not in target:  # one case
                measured, detail = r, stage
            elif r is not None:
                measured_cases.append((r, target["worst"].format(**fields(case))))
        if "worst" in target:
            worst = min(measured_cases) if measured_cases else None
            measured, detail = (worst[0], worst[1]) if worst else (None, "")
        count = len(measured_cases)
    label = target["label"].format(cases=cases_label(range(count)), **label_fields)
    if measured is None and "if_no_case" in target:
        label = target["if_no_case"].get("label", label)
        note = missing if run is None else target["if_no_case"]["note"]
    else:
        note = missing if run is None else (detail or ("" if measured else missing))
    t.add(label, level, measured, required, note)


# ---- "auto" against the fastest stage ----------------------------------------------------------------


def auto_cases(run, level):
    """(ratio auto/fastest, case, auto's stage, fastest stage) for every reduction and matmul with "auto"."""
    cases = []
    kernels = reduce_kernels(run, level)
    if "auto" in kernels:
        for dtype in ("float", "double", "int32"):
            for n in reduce_sizes(run, level, dtype):
                for op in ("sum", "min", "max"):
                    auto = run.results.get(reduce_name(run, level, "auto", op, dtype, n))
                    if auto is None:
                        continue
                    rates = [(rate(run, reduce_name(run, level, k, op, dtype, n)), k) for k in kernels if k != "auto"]
                    rates = [x for x in rates if x[0] is not None]
                    if not rates:
                        continue
                    fastest = max(rates)
                    cases.append((auto["GB/s"] / fastest[0], "reduce %s %s n = %s" % (op, dtype, pow2(n)),
                                  auto.get("label", ""), fastest[1]))
    for dtype in ("float", "double"):
        kernels = matmul_kernels(run, level, dtype)
        if "auto" not in kernels:
            continue
        key = flop_key(run)
        for shape in matmul_shapes(run, level, dtype):
            auto = run.results.get(matmul_name(run, level, "auto", dtype, shape))
            if auto is None:
                continue
            # "auto" keeps full precision, so the fastest full-precision stage (cuBLAS fp32/fp64 included).
            rates = [(rate(run, matmul_name(run, level, k, dtype, shape), key), k) for k in kernels
                     if k != "auto" and run.precision("matmul", k) == "full"]
            rates = [x for x in rates if x[0] is not None]
            if rates:
                fastest = max(rates)
                cases.append((auto[key] / fastest[0], "matmul %s %s" % (dtype, shape), auto.get("label", ""),
                              fastest[1]))
    return cases


def auto_rows(t, runs, spec, notes):
    below = []
    required = spec["required"]
    for backend in spec["backends"]:
        run = runs.get(backend)
        short = spec["short_label"].format(backend=backend)
        if run is None:
            t.add(short, "-", None, required, spec.get("no_run", notes["no_run"]).format(backend=backend))
            continue
        run_levels = levels(run)
        for level in spec["levels"].get(backend, []):  # the expected levels the run lacks come first
            note = notes["no_level"].get(level)
            if level not in run_levels and note:
                t.add(short, level, None, required, note.format(backend=backend))
        for level in run_levels:
            cases = auto_cases(run, level)
            if not cases:
                continue
            worst = min(cases)
            misses = [c for c in cases if c[0] < required]
            label = spec["label"].format(backend=backend, cases=cases_label(cases), below=len(misses),
                                         required=required)
            t.add(label, level, worst[0], required, spec["note"].format(case=worst[1], fastest=worst[3]))
            below += [(backend, level) + c for c in misses]
    return below
