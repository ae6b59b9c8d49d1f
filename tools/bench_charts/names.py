"""Benchmark names (family/backend/kernel/.../size) and the formatting shared by tables and charts."""

import math
import re

TIME_SUFFIXES = ("/real_time", "/manual_time")

# Benchmarks outside the engine (bench_cpu's baseline/ family) shown beside the engine-level stages:
# (name, label, chart colour, chart line style).
REDUCE_REFERENCES = {
    "cpu": (("tbb_parallel_reduce", "tbb::parallel_reduce", "tab:red", ":"),
            ("eigen_sum", "Eigen sum() (1 core)", "tab:purple", "-.")),
}
MATMUL_REFERENCES = {
    "cpu": (("eigen_gemm", "Eigen GEMM, 1 core"), ("eigen_gemm_openmp", "Eigen GEMM, OpenMP on every core")),
}


def strip_suffix(name):
    # bench_cuda's batched families carry their own minimum time, warm-up and repetitions in the name
    # ("/min_time:0.003", "/min_warmup_time:0.003", "/repeats:3"), bench_multi_gpu its iterations.
    name = re.sub(r"/(min_time|min_warmup_time|repeats|iterations):[^/]*", "", name)
    for suffix in TIME_SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def size_of(name):
    """n of a name ending in n:<n>."""
    return int(name.rsplit("n:", 1)[1])


def pow2(n):
    e = math.log2(n)
    return "2^%d" % e if e == int(e) else str(n)


def parse_size(text):
    """n from an int or "2^k" (targets.json)."""
    if isinstance(text, str) and text.startswith("2^"):
        return 1 << int(text[2:])
    return int(text)


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


def rate(run, name, key="GB/s"):
    return run.get(name, key) if run else None


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


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
    if r is None:
        return "-"
    return "%.2f×" % r if r >= 0.095 else "%.2g×" % r


def cases_label(cases):
    if not cases:
        return "all cases"
    return "1 case" if len(cases) == 1 else "%d cases" % len(cases)


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for row in rows:
        lines.append("| " + " | ".join(str(c) for c in row) + " |")
    return "\n".join(lines) + "\n"
