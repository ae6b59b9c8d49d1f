"""PNG charts (matplotlib, Agg): reduction ladders, matrix products, AoS against SoA."""

import os
import sys

from .names import (MATMUL_REFERENCES, REDUCE_REFERENCES, flop_key, fmt, levels, matmul_kernels, matmul_name,
                    matmul_shapes, pow2, rate, reduce_kernels, reduce_name, reduce_sizes, size_of, sweep_name,
                    unique)

BASELINE_LABELS = {"cub": "CUB"}  # a vendor reduce kernel's name on the ladder charts


def import_matplotlib():
    try:
        import matplotlib
    except ImportError:
        # A python3 earlier on PATH (pyenv, a venv) may not see Debian's python3-matplotlib: run again with
        # the system interpreter, once, through the tools/bench_charts.py shim (any way this was started).
        shim = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench_charts.py")
        if os.path.exists("/usr/bin/python3") and os.path.realpath(sys.executable) != os.path.realpath(
            "/usr/bin/python3"
        ) and not os.environ.get("TANDEM_BENCH_CHARTS_REEXEC"):
            os.environ["TANDEM_BENCH_CHARTS_REEXEC"] = "1"
            os.execv("/usr/bin/python3", ["/usr/bin/python3", shim] + sys.argv[1:])
        sys.exit("bench_charts: matplotlib not found (apt-get install python3-matplotlib)")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def title_suffix(run):
    return "%s, %s" % (run.device(), run.date())


def how(level):
    return "engine calls, wall clock" if level == "engine" else "ladder on its own stream, CUDA events"


def chart_reduce_ladder(plt, run, level, n, out_dir):
    kernels = reduce_kernels(run, level)
    values = [(k, rate(run, reduce_name(run, level, k, "sum", "float", n))) for k in kernels]
    values = [(k, v) for k, v in values if v is not None]
    if not values:
        return None
    fig, ax = plt.subplots(figsize=(11, 5))
    colors = ["tab:gray" if k == "auto" else "tab:orange" if run.is_baseline("reduce", k) else "tab:blue"
              for k, _ in values]
    bars = ax.bar(range(len(values)), [v for _, v in values], color=colors)
    for bar, (_, v) in zip(bars, values):
        ax.annotate(fmt(v), (bar.get_x() + bar.get_width() / 2, v), ha="center", va="bottom", fontsize=7,
                    xytext=(0, 1), textcoords="offset points")
    ax.set_xticks(range(len(values)))
    ax.set_xticklabels([k for k, _ in values], rotation=40, ha="right")
    lines = [(sweep_name(run, level, "float", n), "read sweep", "tab:green", "--")]
    for k in run.baselines("reduce"):
        lines.append((reduce_name(run, level, k, "sum", "float", n), BASELINE_LABELS.get(k, k), "tab:orange", ":"))
    for base, label, color, style in REDUCE_REFERENCES.get(run.backend, ()):
        lines.append(("baseline/%s/sum/float/n:%d" % (base, n), label, color, style))
    for name, label, color, style in lines:
        v = rate(run, name)
        if v is not None:
            ax.axhline(v, color=color, linestyle=style, label="%s: %s GB/s" % (label, fmt(v)))
    ax.set_ylabel("GB/s (input bytes read per second)")
    ax.set_title("Reduction ladder, float sum, n = %s (%s)\n%s" % (pow2(n), how(level), title_suffix(run)))
    top = max([v for _, v in values] + [rate(run, name) or 0 for name, *_ in lines])
    ax.set_ylim(0, top * 1.22)  # room above the bars for the legend
    ax.legend(loc="upper center", fontsize=8, ncol=len(lines))
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    path = os.path.join(out_dir, "reduce_ladder_%s_%s_float_sum_n%s.png" % (run.backend, level, pow2(n).replace("^", "")))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def chart_gemm(plt, run, level, dtype, out_dir):
    """One panel for the full-precision stages (cuBLAS fp32/fp64 and the Eigen baselines included), and
    one for the tf32/bf16 stages with their cuBLAS modes where the run has them: on one axis the
    tensor-core rates would flatten the others. Precision and baselines come from the kernel metadata."""
    key = flop_key(run)
    kernels = matmul_kernels(run, level, dtype)
    shapes = [s for s in matmul_shapes(run, level, dtype) if "x" not in s]
    if not kernels or not shapes:
        return None
    reduced = [k for k in kernels if run.precision("matmul", k) != "full"]
    full = [k for k in kernels if k not in reduced]
    series = {k: [rate(run, matmul_name(run, level, k, dtype, s), key) for s in shapes] for k in kernels}
    labels = {}
    if level == "engine":
        for base, label in MATMUL_REFERENCES.get(run.backend, ()):
            name = "baseline/" + base
            series[name] = [rate(run, "baseline/%s/%s/%s" % (base, dtype, s), key) for s in shapes]
            full.append(name)
            labels[name] = label
    panels = [("full precision (%s)" % dtype, full)] + ([("tf32 / bf16 tensor cores", reduced)] if reduced else [])
    fig, axes = plt.subplots(1, len(panels), figsize=(7.5 * len(panels), 5.5), squeeze=False)
    x = list(range(len(shapes)))
    for ax, (panel_title, names) in zip(axes[0], panels):
        for k in names:
            pts = [(xi, y) for xi, y in zip(x, series[k]) if y is not None]
            if not pts:
                continue
            baseline = k in labels or run.is_baseline("matmul", k)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", linestyle="--" if baseline else "-",
                    linewidth=2 if baseline else 1.2, label=labels.get(k, k))
        ax.set_xticks(x)
        ax.set_xticklabels(["%s³" % s for s in shapes])
        ax.set_xlabel("m = k = n")
        ax.set_ylabel(key)
        ax.set_ylim(bottom=0)
        ax.set_title(panel_title)
        ax.legend(fontsize=8, loc="upper left")
        ax.grid(alpha=0.3)
    fig.suptitle("Matrix product, %s, %s (%s)\n%s" % (dtype, key, how(level), title_suffix(run)))
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


def has_ladder(run, level, n):
    return any(rate(run, reduce_name(run, level, k, "sum", "float", n)) is not None for k in reduce_kernels(run, level))


def has_gemm(run, level, dtype):
    return bool(matmul_kernels(run, level, dtype)) and any("x" not in s for s in matmul_shapes(run, level, dtype))


def chart_plan(runs):
    """(file name, alt text, draw) of every chart the runs have data for, in page order; draw(plt, out_dir)
    writes it. The names need no matplotlib (docs/PERFORMANCE.md lists them)."""
    plan = []
    for run in runs.values():
        where = "%s, %s" % ("GPU" if run.backend == "cuda" else "CPU", run.device())
        for level in levels(run):
            sizes = reduce_sizes(run, level, "float")
            for n in unique([s for s in (sizes[-1] if sizes else None, 1 << 20) if s in sizes]):
                if has_ladder(run, level, n):
                    name = "reduce_ladder_%s_%s_float_sum_n%s.png" % (run.backend, level, pow2(n).replace("^", ""))
                    plan.append((name, "Reduction ladder, float sum, n = %s, %s level (%s)" % (pow2(n), level, where),
                                 lambda plt, out, run=run, level=level, n=n: chart_reduce_ladder(plt, run, level, n,
                                                                                                 out)))
            for dtype in ("float", "double"):
                if has_gemm(run, level, dtype):
                    plan.append(("gemm_%s_%s_%s.png" % (run.backend, level, dtype),
                                 "Matrix product, %s, %s level (%s)" % (dtype, level, where),
                                 lambda plt, out, run=run, level=level, dtype=dtype: chart_gemm(plt, run, level, dtype,
                                                                                                 out)))
        if run.names("strided/%s/" % run.backend):
            plan.append(("strided_%s.png" % run.backend, "AoS field against SoA, float sum (%s)" % where,
                         lambda plt, out, run=run: chart_strided(plt, run, out)))
    return plan


def write_charts(plt, runs, out_dir):
    """Every chart of every run; the paths written."""
    os.makedirs(out_dir, exist_ok=True)
    return [p for p in (draw(plt, out_dir) for _, _, draw in chart_plan(runs)) if p]
