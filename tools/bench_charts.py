#!/usr/bin/python3
"""Turns bench_cpu / bench_cuda JSON (Google Benchmark, --benchmark_out_format=json) into PNG charts and
markdown tables for docs/PERFORMANCE.md.

Usage:  python3 tools/bench_charts.py --out docs/perf bench_cuda.json bench_cpu.json > docs/perf/tables.md

Charts (written to --out, one set per backend found in the inputs; "engine" is the reduce/ and matmul/
families, timed around synchronous engine calls, "kernel" the kernel/ family, the ladders timed with CUDA
events on a stream of bench_cuda's own):
  reduce_ladder_<backend>_<level>_float_sum_n<n>.png  GB/s per stage, float sum, at the largest n and at
                                                      2^20, with lines for the read sweep (and CUB on the GPU,
                                                      tbb::parallel_reduce and Eigen sum() on the CPU)
  gemm_<backend>_<level>_<type>.png                   TFLOP/s (GPU) or GFLOP/s (CPU) per stage against the
                                                      square sizes, cuBLAS modes and Eigen baselines included
  strided_<backend>.png                               AoS field (stride 2) against SoA, GB/s per stage
Tables (markdown, to stdout or --tables FILE): the runs, the targets of issue #4 as ratios, then per-stage
tables of every family present.

Several runs of one benchmark (--benchmark_repetitions) count as their median; Google Benchmark's
aggregate rows (_mean, _median, ...) are used only for their median. Names are compared without the
"/real_time" or "/manual_time" suffix. Needs Debian's python3-matplotlib (Agg backend, no display).
"""

import argparse
import json
import math
import os
import re
import statistics
import sys


def _import_matplotlib():
    try:
        import matplotlib
    except ImportError:
        # A python3 earlier on PATH (pyenv, a venv) may not see Debian's python3-matplotlib: run again with
        # the system interpreter, once.
        if os.path.exists("/usr/bin/python3") and os.path.realpath(sys.executable) != os.path.realpath(
            "/usr/bin/python3"
        ) and not os.environ.get("TANDEM_BENCH_CHARTS_REEXEC"):
            os.environ["TANDEM_BENCH_CHARTS_REEXEC"] = "1"
            os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
        sys.exit("bench_charts.py: matplotlib not found (apt-get install python3-matplotlib)")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


# ---- Reading ---------------------------------------------------------------------------------------

TIME_SUFFIXES = ("/real_time", "/manual_time")
TO_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
RATE_KEYS = ("GB/s", "pct_sweep", "TFLOP/s", "GFLOP/s")


def strip_suffix(name):
    # bench_cuda's batched families carry their own minimum time in the name ("/min_time:0.003").
    name = re.sub(r"/min_time:[^/]*", "", name)
    for suffix in TIME_SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


class Run:
    """The benchmarks of one backend: name (without the time suffix) -> dict of values, in file order."""

    def __init__(self, backend, context, path):
        self.backend = backend
        self.context = context
        self.path = path
        self.results = {}
        self.errors = {}

    def get(self, name, key):
        r = self.results.get(name)
        return None if r is None else r.get(key)

    def names(self, prefix):
        return [n for n in self.results if n.startswith(prefix)]

    def device(self):
        c = self.context
        device = c.get("tandem_device", "?")
        if self.backend == "cpu":
            device += " (%s cores)" % c.get("tandem_compute_units", c.get("num_cpus", "?"))
        return device

    def date(self):
        return self.context.get("date", "?")[:10]


def load(paths):
    runs = {}
    for path in paths:
        with open(path) as f:
            data = json.load(f)
        context = data.get("context", {})
        backend = context.get("tandem_backend", "cuda" if "bench_cuda" in context.get("executable", "") else "cpu")
        if backend in runs:
            print("bench_charts.py: %s: a second %s run: its results replace the first's of the same name, and "
                  "its device and date are shown" % (path, backend), file=sys.stderr)
        run = runs.get(backend) or Run(backend, context, path)
        run.context, run.path = context, path
        samples = {}  # name -> list of per-repetition dicts
        medians = {}  # name -> Google Benchmark's own median aggregate
        for b in data.get("benchmarks", []):
            name = strip_suffix(b.get("run_name", b["name"]))
            if b.get("error_occurred"):
                run.errors[name] = b.get("error_message", "error")
                continue
            values = {k: b[k] for k in RATE_KEYS if k in b}
            values["time_ns"] = b["real_time"] * TO_NS.get(b.get("time_unit", "ns"), 1.0)
            for k in ("label", "calls_per_iteration", "threads"):
                if k in b:
                    values[k] = b[k]
            if b.get("run_type") == "aggregate":
                if b.get("aggregate_name") == "median":
                    medians[name] = values
                continue
            samples.setdefault(name, []).append(values)
        for name in unique(list(samples) + list(medians)):  # aggregates only: --benchmark_report_aggregates_only
            reps = samples.get(name, [])
            if name in medians:
                value = medians[name]
                if reps and "label" in reps[0]:
                    value.setdefault("label", reps[0]["label"])
            elif len(reps) == 1:
                value = reps[0]
            else:
                value = dict(reps[0])
                for k in list(RATE_KEYS) + ["time_ns"]:
                    if k in reps[0]:
                        value[k] = statistics.median(r[k] for r in reps)
            run.results[name] = value
        runs[backend] = run
    return runs


# ---- Names -----------------------------------------------------------------------------------------


def size_of(name):
    """n of a name ending in n:<n>."""
    return int(name.rsplit("n:", 1)[1])


def pow2(n):
    e = math.log2(n)
    return "2^%d" % e if e == int(e) else str(n)


def shape_key(shape):
    """Square sizes first, by size; then the other shapes."""
    if "x" not in shape:
        return (0, int(shape))
    dims = [int(d) for d in shape.split("x")]
    return (1, dims[0] * dims[1] * dims[2])


def unique(seq):
    seen, out = set(), []
    for x in seq:
        if x not in seen:
            seen.add(x)
            out.append(x)
    return out


def reduce_prefix(run, level):
    """The name prefix of a backend's reductions at a level: reduce/<backend>/ or kernel/<backend>/."""
    return ("reduce/%s/" if level == "engine" else "kernel/%s/") % run.backend


def reduce_kernels(run, level):
    """Stages of the reduce family at a level, in file (ladder) order, "auto" included."""
    prefix = reduce_prefix(run, level)
    return unique(n[len(prefix):].split("/")[0] for n in run.names(prefix) if n.split("/")[3] in ("sum", "min", "max"))


def reduce_sizes(run, level, dtype):
    prefix = reduce_prefix(run, level)
    return sorted({size_of(n) for n in run.names(prefix) if "/%s/n:" % dtype in n and n.split("/")[3] != "gemm"})


def reduce_name(run, level, kernel, op, dtype, n):
    return "%s%s/%s/%s/n:%d" % (reduce_prefix(run, level), kernel, op, dtype, n)


def matmul_name(run, level, kernel, dtype, shape):
    if level == "engine":
        return "matmul/%s/%s/%s/%s" % (run.backend, kernel, dtype, shape)
    return "kernel/%s/%s/gemm/%s/%s" % (run.backend, kernel, dtype, shape)


def matmul_kernels(run, level, dtype):
    if level == "engine":
        prefix = "matmul/%s/" % run.backend
        names = [n for n in run.names(prefix) if n.split("/")[3] == dtype]
        return unique(n.split("/")[2] for n in names)
    prefix = "kernel/%s/" % run.backend
    names = [n for n in run.names(prefix) if n.split("/")[3] == "gemm" and n.split("/")[4] == dtype]
    return unique(n.split("/")[2] for n in names)


def matmul_shapes(run, level, dtype):
    shapes = set()
    for kernel in matmul_kernels(run, level, dtype):
        prefix = matmul_name(run, level, kernel, dtype, "")
        shapes |= {n[len(prefix):] for n in run.names(prefix)}
    return sorted(shapes, key=shape_key)


def flop_key(run):
    return "TFLOP/s" if run.backend == "cuda" else "GFLOP/s"


def levels(run):
    out = []
    if run.names("reduce/") or run.names("matmul/"):
        out.append("engine")
    if run.names("kernel/"):
        out.append("kernel")
    return out


def sweep_name(run, level, dtype, n):
    """The read sweep timed like the level: batched (kernel level) or one sweep per call."""
    batched = "baseline/read_sweep_batched/%s/n:%d" % (dtype, n)
    if level == "kernel" and batched in run.results:
        return batched
    return "baseline/read_sweep/%s/n:%d" % (dtype, n)


# Full-precision own stages, which the fp32/fp64 cuBLAS comparison is about (never tf32/bf16 or cuBLAS).
REDUCED_PRECISION = ("tensor_core", "wgmma", "cublas", "auto")


def is_reduced_precision_matmul(kernel):
    """The tf32/bf16 stages and their cuBLAS modes."""
    return kernel.startswith(("tensor_core", "wgmma")) or kernel in ("cublas_tf32", "cublas_bf16")


def is_own_full_precision_matmul(kernel):
    return not kernel.startswith(REDUCED_PRECISION)


# ---- Formatting ------------------------------------------------------------------------------------


def fmt(v):
    if v is None:
        return "-"
    if v >= 100:
        return "%.0f" % v
    if v >= 10:
        return "%.1f" % v
    return "%.2f" % v


def fmt_ratio(r):
    return "-" if r is None else "%.2f×" % r


def cases_label(cases):
    if not cases:
        return "all cases"
    return "1 case" if len(cases) == 1 else "%d cases" % len(cases)


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for row in rows:
        lines.append("| " + " | ".join(str(c) for c in row) + " |")
    return "\n".join(lines) + "\n"


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


# ---- Targets ---------------------------------------------------------------------------------------


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
        return table(["target", "level", "measured", "required", "status", "case"], self.rows)


def rate(run, name, key="GB/s"):
    return run.get(name, key) if run else None


NO_KERNEL_LEVEL = "needs a bench_cuda run with the kernel/ family"


def gpu_levels(run):
    """The levels the GPU targets are computed at, with the note for a value the inputs lack."""
    if run is None:
        return [("kernel", "no bench_cuda run given"), ("engine", "no bench_cuda run given")]
    return [("kernel", "" if run.names("kernel/") else NO_KERNEL_LEVEL), ("engine", "")]


def gpu_reduce_targets(t, run):
    for level, missing in gpu_levels(run):
        # single_pass against CUB at small n: float sum, then the worst operator and type.
        for n in (1 << 12, 1 << 16, 1 << 20):
            r = run and ratio(rate(run, reduce_name(run, level, "single_pass", "sum", "float", n)),
                              rate(run, reduce_name(run, level, "cub", "sum", "float", n)))
            t.add("single_pass / cub, float sum, n = %s" % pow2(n), level, r, 1.3, "" if r else missing)
        cases = []
        for dtype in ("float", "double", "int32"):
            for op in ("sum", "min", "max"):
                for n in (1 << 12, 1 << 16, 1 << 20):
                    r = run and ratio(rate(run, reduce_name(run, level, "single_pass", op, dtype, n)),
                                      rate(run, reduce_name(run, level, "cub", op, dtype, n)))
                    if r is not None:
                        cases.append((r, "%s %s n = %s" % (op, dtype, pow2(n))))
        worst = min(cases) if cases else None
        t.add("single_pass / cub, worst of %s (sum/min/max × float/double/int32, n = 2^12..2^20)" % cases_label(cases),
              level, worst and worst[0], 1.3, worst[1] if worst else missing)
        # The best own stage (not cub, not auto) against CUB at 2^28.
        n = 1 << 28
        best = None
        if run:
            for k in reduce_kernels(run, level):
                v = rate(run, reduce_name(run, level, k, "sum", "float", n))
                if k not in ("auto", "cub") and v is not None and (best is None or v > best[0]):
                    best = (v, k)
        r = run and ratio(best and best[0], rate(run, reduce_name(run, level, "cub", "sum", "float", n)))
        t.add("best own stage / cub, float sum, n = 2^28", level, r, 0.97, best[1] if best else missing)


def gpu_matmul_targets(t, run):
    for level, missing in gpu_levels(run):
        for shape, required in (("4096", 0.85), ("4097", 0.9)):
            best = None
            if run:
                for k in matmul_kernels(run, level, "float"):
                    v = rate(run, matmul_name(run, level, k, "float", shape), "TFLOP/s")
                    if is_own_full_precision_matmul(k) and v is not None and (best is None or v > best[0]):
                        best = (v, k)
            r = run and ratio(best and best[0], rate(run, matmul_name(run, level, "cublas", "float", shape), "TFLOP/s"))
            t.add("best own fp32 stage / cublas, %s^3" % shape, level, r, required, best[1] if best else missing)
        for shape, required in (("4096", 0.6), ("4097", 1.0)):
            best = None  # the faster own tf32 stage: tensor_core_tf32 (WMMA) or wgmma_tf32
            for k in ("tensor_core_tf32", "wgmma_tf32"):
                v = run and rate(run, matmul_name(run, level, k, "float", shape), "TFLOP/s")
                if v is not None and v and (best is None or v > best[0]):
                    best = (v, k)
            r = run and ratio(best and best[0], rate(run, matmul_name(run, level, "cublas_tf32", "float", shape), "TFLOP/s"))
            t.add("best own tf32 stage / cublas_tf32, %s^3" % shape, level, r, required, best[1] if best else missing)


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
                     if k != "auto" and not is_reduced_precision_matmul(k)]
            rates = [x for x in rates if x[0] is not None]
            if rates:
                fastest = max(rates)
                cases.append((auto[key] / fastest[0], "matmul %s %s" % (dtype, shape), auto.get("label", ""),
                              fastest[1]))
    return cases


def auto_targets(t, runs):
    below = []
    for backend in ("cuda", "cpu"):
        run = runs.get(backend)
        if run is None:
            t.add("auto / fastest stage (%s)" % backend, "-", None, 0.95, "no %s run given" % backend)
            continue
        run_levels = levels(run)
        if backend == "cuda" and "kernel" not in run_levels:
            t.add("auto / fastest stage (cuda)", "kernel", None, 0.95, NO_KERNEL_LEVEL)
        for level in run_levels:
            cases = auto_cases(run, level)
            if not cases:
                continue
            worst = min(cases)
            misses = [c for c in cases if c[0] < 0.95]
            t.add("auto / fastest stage (%s), worst of %s; %d below 0.95×" % (backend, cases_label(cases), len(misses)),
                  level, worst[0], 0.95, "%s (fastest: %s)" % (worst[1], worst[3]))
            below += [(backend, level) + c for c in misses]
    return below


def cpu_targets(t, run):
    if run is None:
        t.add("CPU tbb_vectorized / read sweep", "engine", None, 0.9, "no bench_cpu run given")
        t.add("CPU eigen_tbb / eigen_gemm_openmp", "engine", None, 0.9, "no bench_cpu run given")
        t.add("CPU engine overhead (engine - raw_backend), ns", "engine", None, ("<=", 2000), "no bench_cpu run given")
        return
    sizes = reduce_sizes(run, "engine", "float")
    if sizes:
        n = sizes[-1]
        r = ratio(rate(run, reduce_name(run, "engine", "tbb_vectorized", "sum", "float", n)),
                  rate(run, sweep_name(run, "engine", "float", n)))
        t.add("CPU tbb_vectorized / read sweep, float sum, n = %s" % pow2(n), "engine", r, 0.9)
        worst, count = None, 0
        for dtype in ("float", "double", "int32"):
            for op in ("sum", "min", "max"):
                r = ratio(rate(run, reduce_name(run, "engine", "tbb_vectorized", op, dtype, n)),
                          rate(run, sweep_name(run, "engine", dtype, n)))
                if r is not None:
                    count += 1
                    if worst is None or r < worst[0]:
                        worst = (r, "%s %s" % (op, dtype))
        t.add("CPU tbb_vectorized / read sweep, worst of %s (sum/min/max × float/double/int32), n = %s" %
              (cases_label(range(count)), pow2(n)), "engine", worst and worst[0], 0.9, worst[1] if worst else "")
    else:
        t.add("CPU tbb_vectorized / read sweep", "engine", None, 0.9, "no reduce/cpu results")
    cases = []
    for dtype in ("float", "double"):
        for shape in matmul_shapes(run, "engine", dtype):
            r = ratio(rate(run, matmul_name(run, "engine", "eigen_tbb", dtype, shape), "GFLOP/s"),
                      rate(run, "baseline/eigen_gemm_openmp/%s/%s" % (dtype, shape), "GFLOP/s"))
            if r is not None:
                cases.append((r, "%s %s" % (dtype, shape)))
    if cases:
        worst = min(cases)
        t.add("CPU eigen_tbb / eigen_gemm_openmp, worst of %s" % cases_label(cases), "engine", worst[0], 0.9, worst[1])
    else:
        t.add("CPU eigen_tbb / eigen_gemm_openmp", "engine", None, 0.9,
              "needs a bench_cpu run with baseline/eigen_gemm_openmp")
    engine = run.get("overhead/cpu/engine/sum/float/n:16", "time_ns")
    raw = run.get("overhead/cpu/raw_backend/sum/float/n:16", "time_ns")
    diff = None if engine is None or raw is None else engine - raw
    t.add("CPU engine overhead (engine - raw_backend), ns", "engine", diff, ("<=", 2000),
          "needs a bench_cpu run with overhead/" if diff is None else "engine %s ns, raw %s ns" % (fmt(engine), fmt(raw)))


# ---- Tables ----------------------------------------------------------------------------------------


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
            if run.backend == "cpu" and level == "engine" and op == "sum":
                for base in ("tbb_parallel_reduce", "eigen_sum"):
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
        if level == "engine" and run.backend == "cpu":
            for base in ("eigen_gemm", "eigen_gemm_openmp"):
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


def auto_below_table(below):
    if not below:
        return "No case of \"auto\" below 0.95× the fastest stage.\n"
    rows = [[b, lvl, case, stage or "-", fastest, fmt_ratio(r)] for (b, lvl, r, case, stage, fastest) in below]
    return table(["backend", "level", "case", "auto ran", "fastest", "auto / fastest"], rows)


# ---- Charts ----------------------------------------------------------------------------------------


def title_suffix(run):
    return "%s, %s" % (run.device(), run.date())


def chart_reduce_ladder(plt, run, level, n, out_dir):
    kernels = reduce_kernels(run, level)
    values = [(k, rate(run, reduce_name(run, level, k, "sum", "float", n))) for k in kernels]
    values = [(k, v) for k, v in values if v is not None]
    if not values:
        return None
    fig, ax = plt.subplots(figsize=(11, 5))
    colors = ["tab:gray" if k == "auto" else "tab:orange" if k == "cub" else "tab:blue" for k, _ in values]
    bars = ax.bar(range(len(values)), [v for _, v in values], color=colors)
    for bar, (_, v) in zip(bars, values):
        ax.annotate(fmt(v), (bar.get_x() + bar.get_width() / 2, v), ha="center", va="bottom", fontsize=7,
                    xytext=(0, 1), textcoords="offset points")
    ax.set_xticks(range(len(values)))
    ax.set_xticklabels([k for k, _ in values], rotation=40, ha="right")
    lines = [(sweep_name(run, level, "float", n), "read sweep", "tab:green", "--")]
    if run.backend == "cuda":
        lines.append((reduce_name(run, level, "cub", "sum", "float", n), "CUB", "tab:orange", ":"))
    else:
        lines.append(("baseline/tbb_parallel_reduce/sum/float/n:%d" % n, "tbb::parallel_reduce", "tab:red", ":"))
        lines.append(("baseline/eigen_sum/sum/float/n:%d" % n, "Eigen sum() (1 core)", "tab:purple", "-."))
    for name, label, color, style in lines:
        v = rate(run, name)
        if v is not None:
            ax.axhline(v, color=color, linestyle=style, label="%s: %s GB/s" % (label, fmt(v)))
    ax.set_ylabel("GB/s (input bytes read per second)")
    how = "engine calls, wall clock" if level == "engine" else "ladder on its own stream, CUDA events"
    ax.set_title("Reduction ladder, float sum, n = %s (%s)\n%s" % (pow2(n), how, title_suffix(run)))
    top = max([v for _, v in values] + [rate(run, name) or 0 for name, *_ in lines])
    ax.set_ylim(0, top * 1.22)  # room above the bars for the legend
    ax.legend(loc="upper center", fontsize=8, ncol=len(lines))
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    path = os.path.join(out_dir, "reduce_ladder_%s_%s_float_sum_n%s.png" % (run.backend, level, pow2(n).replace("^", "")))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


BASELINE_LABELS = {
    "baseline/eigen_gemm": "Eigen GEMM, 1 core",
    "baseline/eigen_gemm_openmp": "Eigen GEMM, OpenMP on every core",
}


def chart_gemm(plt, run, level, dtype, out_dir):
    """One panel for the full-precision stages (cuBLAS fp32/fp64 and the Eigen baselines included), and
    one for the tf32/bf16 stages with their cuBLAS modes where the run has them: on one axis the
    tensor-core rates would flatten the others."""
    key = flop_key(run)
    kernels = matmul_kernels(run, level, dtype)
    shapes = [s for s in matmul_shapes(run, level, dtype) if "x" not in s]
    if not kernels or not shapes:
        return None
    reduced = [k for k in kernels if is_reduced_precision_matmul(k)]
    full = [k for k in kernels if k not in reduced]
    series = {k: [rate(run, matmul_name(run, level, k, dtype, s), key) for s in shapes] for k in kernels}
    if level == "engine" and run.backend == "cpu":
        for base in ("eigen_gemm", "eigen_gemm_openmp"):
            name = "baseline/" + base
            series[name] = [rate(run, "baseline/%s/%s/%s" % (base, dtype, s), key) for s in shapes]
            full.append(name)
    panels = [("full precision (%s)" % dtype, full)] + ([("tf32 / bf16 tensor cores", reduced)] if reduced else [])
    fig, axes = plt.subplots(1, len(panels), figsize=(7.5 * len(panels), 5.5), squeeze=False)
    x = list(range(len(shapes)))
    for ax, (panel_title, names) in zip(axes[0], panels):
        for k in names:
            pts = [(xi, y) for xi, y in zip(x, series[k]) if y is not None]
            if not pts:
                continue
            baseline = k.startswith(("cublas", "baseline/"))
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", linestyle="--" if baseline else "-",
                    linewidth=2 if baseline else 1.2, label=BASELINE_LABELS.get(k, k))
        ax.set_xticks(x)
        ax.set_xticklabels(["%s³" % s for s in shapes])
        ax.set_xlabel("m = k = n")
        ax.set_ylabel(key)
        ax.set_ylim(bottom=0)
        ax.set_title(panel_title)
        ax.legend(fontsize=8, loc="upper left")
        ax.grid(alpha=0.3)
    how = "engine calls, wall clock" if level == "engine" else "ladder on its own stream, CUDA events"
    fig.suptitle("Matrix product, %s, %s (%s)\n%s" % (dtype, key, how, title_suffix(run)))
    fig.tight_layout()
    path = os.path.join(out_dir, "gemm_%s_%s_%s.png" % (run.backend, level, dtype))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def chart_strided(plt, run, out_dir):
    prefix = "strided/%s/" % run.backend
    names = run.names(prefix)
    if not names:
        return None
    kernels = unique(n.split("/")[2] for n in names)
    n = size_of(names[0])
    aos = [rate(run, "%s%s/aos_field/float/n:%d" % (prefix, k, n)) or 0 for k in kernels]
    soa = [rate(run, "%s%s/soa/float/n:%d" % (prefix, k, n)) or 0 for k in kernels]
    fig, ax = plt.subplots(figsize=(11, 5))
    x = list(range(len(kernels)))
    ax.bar([i - 0.2 for i in x], aos, width=0.4, label="AoS field (stride 2)", color="tab:red")
    ax.bar([i + 0.2 for i in x], soa, width=0.4, label="SoA (contiguous)", color="tab:blue")
    ax.set_xticks(x)
    ax.set_xticklabels(kernels, rotation=40, ha="right")
    ax.set_ylabel("GB/s of the useful n·4 bytes")
    ax.set_title("AoS against SoA, float sum, n = %s (engine calls)\n%s" % (pow2(n), title_suffix(run)))
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    path = os.path.join(out_dir, "strided_%s.png" % run.backend)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


# ---- Main ------------------------------------------------------------------------------------------


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("json", nargs="+", help="bench_cpu / bench_cuda --benchmark_out JSON files")
    parser.add_argument("--out", default="docs/perf", help="folder for the PNG charts (default docs/perf)")
    parser.add_argument("--tables", help="write the markdown tables here instead of stdout")
    parser.add_argument("--no-charts", action="store_true", help="tables only")
    args = parser.parse_args()
    plt = None if args.no_charts else _import_matplotlib()  # first: it may run this script again

    runs = load(args.json)
    md = []
    md.append("<!-- Generated by tools/bench_charts.py from: %s -->\n\n" % ", ".join(os.path.basename(p) for p in args.json))
    md.append("### Runs\n\n" + runs_table(runs) + "\n")

    t = Targets()
    gpu_reduce_targets(t, runs.get("cuda"))
    gpu_matmul_targets(t, runs.get("cuda"))
    below = auto_targets(t, runs)
    cpu_targets(t, runs.get("cpu"))
    md.append("### Targets (issue #4)\n\nRatios of rates (GB/s or FLOP/s) from the runs above; \"kernel\" is the "
              "kernel/ family (CUDA events on bench_cuda's own stream), \"engine\" the engine-level families "
              "(wall clock around synchronous engine calls).\n\n")
    md.append(t.markdown() + "\n")
    md.append("#### Cases where \"auto\" is below 0.95× the fastest stage\n\n" + auto_below_table(below) + "\n")

    for backend, run in runs.items():
        md.append("### %s: %s, %s\n\n" % (backend, run.device(), run.date()))
        if run.errors:
            rows = [["`%s`" % n, e] for n, e in run.errors.items()]
            md.append("#### Benchmarks that reported an error\n\n" + table(["benchmark", "error"], rows) + "\n")
        for level in levels(run):
            md.append(reduce_tables(run, level))
            md.append(matmul_tables(run, level))
        md.append(strided_table(run))
        md.append(overhead_table(run))

    text = "".join(md)
    if args.tables:
        with open(args.tables, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)

    if plt is None:
        return
    os.makedirs(args.out, exist_ok=True)
    written = []
    for run in runs.values():
        for level in levels(run):
            sizes = reduce_sizes(run, level, "float")
            for n in unique([s for s in (sizes[-1] if sizes else None, 1 << 20) if s in sizes]):
                written.append(chart_reduce_ladder(plt, run, level, n, args.out))
            for dtype in ("float", "double"):
                written.append(chart_gemm(plt, run, level, dtype, args.out))
        written.append(chart_strided(plt, run, args.out))
    for path in written:
        if path:
            print("bench_charts.py: wrote %s" % path, file=sys.stderr)


if __name__ == "__main__":
    main()
