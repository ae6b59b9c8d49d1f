#!/usr/bin/env python3
"""The two charts of docs/TUTORIAL.md that docs/perf/ does not have: each ladder beside its classic.

    /usr/bin/python3 tools/tutorial_charts.py [--json docs/perf/json/bench_cuda_h200.json]
        [--gemm-json docs/perf/json/bench_matmul_h200.json] [--matmul16 docs/perf/json/bench_matmul16_h200.json]
        [--out docs/perf]

writes
  tutorial_reduce_classic.png  the reduction ladder against Mark Harris's seven kernels: speed-up over the
                               first rung, and each rung's share of the read limit (float sum, kernel level)
  tutorial_gemm_classic.png    the matmul ladder against Simon Boehm's SGEMM worklog: each rung's
                               throughput over cuBLAS SGEMM on the same GPU (4096^3, kernel level)

Our numbers come from the bench_cuda JSON (kernel level: kernel/cuda/..., baseline/read_sweep_batched/...;
the median where a benchmark ran several times). Where a run has no kernel-level products
(kernel/cuda/<stage>/gemm/float/4096), the matmul chart uses the engine-level rows of the same run
(matmul/cuda/<stage>/float/4096, for every stage and for cuBLAS alike, and says so in its title); a stage
missing there too is taken from the bench_cuda_float16 JSON (float16/cuda/<stage>/matmul/float/4096x4096x4096,
float as tf32), if given. The classic numbers are constants below, with their
sources. Needs matplotlib (Debian: python3-matplotlib).
"""

import argparse
import json
import os
import re
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Mark Harris, "Optimizing Parallel Reduction in CUDA" (NVIDIA Developer Technology, 2007, slides),
# https://developer.download.nvidia.com/assets/cuda/files/reduction.pdf: 2^22 ints on a G80, GB/s per
# kernel (slide 34, "Performance for 4M element reduction"), and the G80's peak of 86.4 GB/s (slide 6).
# Each kernel beside the tandem stage that makes the same change.
HARRIS_PEAK_GBS = 86.4
HARRIS = [
    ("1: interleaved, divergent", "interleaved_divergent", 2.083),
    ("2: interleaved, strided index", "interleaved_strided_index", 4.854),
    ("3: sequential addressing", "sequential_addressing", 9.741),
    ("4: first add during load", "first_add_during_load", 17.377),
    ("5: unroll last warp", "unroll_last_warp", 31.289),
    ("6: completely unrolled", "complete_unroll", 43.996),
    ("7: multiple elements per thread", "multiple_adds_per_thread", 62.671),
]
# His cumulative speed-ups over kernel 1 as slide 34 prints them (from the times, so not quite the GB/s ratios).
HARRIS_CUMULATIVE = [1.0, 2.33, 4.68, 8.34, 15.01, 21.16, 30.04]

# Simon Boehm, "How to Optimize a CUDA Matmul Kernel for cuBLAS-like Performance: a Worklog"
# (https://siboehm.com/articles/22/CUDA-MMM; table in https://github.com/siboehm/SGEMM_CUDA, README):
# GFLOP/s at 4096 x 4096 on an A6000, and cuBLAS on the same GPU.
BOEHM_CUBLAS = 23249.6
BOEHM = [
    ("1: naive", 309.0),
    ("2: GMEM coalescing", 1986.5),
    ("3: SMEM caching", 2980.3),
    ("4: 1D blocktiling", 8474.7),
    ("5: 2D blocktiling", 15971.7),
    ("6: vectorized", 18237.3),
    ("9: autotuning", 19721.0),
    ("10: warptiling", 21779.3),
]

REDUCE_STAGES = ["interleaved_divergent", "interleaved_strided_index", "sequential_addressing",
                 "first_add_during_load", "unroll4_blocks", "unroll8_blocks", "unroll_last_warp",
                 "complete_unroll", "multiple_adds_per_thread", "warp_shuffle", "single_pass", "cub"]
MATMUL_STAGES = ["naive", "tiled_16", "tiled_32", "register_tiled", "tensor_core_tf32", "tensor_core_bf16",
                 "wgmma_tf32", "wgmma_bf16", "wgmma_tma", "wgmma_warp_specialized", "wgmma_persistent",
                 "cublas", "cublas_tf32", "cublas_bf16"]
REDUCE_SIZES = [(20, "n = 2^20 (4 MiB, in L2)"), (24, "n = 2^24 (64 MiB)"), (30, "n = 2^30 (4 GiB)")]
GEMM_SIZE = "4096"


def load_rates(path):
    """{benchmark name without its min_time / timing suffixes: median of GB/s or TFLOP/s}."""
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    values, medians = {}, {}
    for b in data["benchmarks"]:
        if b.get("error_occurred"):
            continue
        target = values
        if b.get("run_type", "iteration") != "iteration":
            if b.get("aggregate_name") != "median":
                continue
            target = medians  # a run that kept only its aggregates
        name = re.sub(r"/(min_time|min_warmup_time|repeats):[^/]+|/(manual|real)_time(_median)?$", "", b["name"])
        rate = b.get("GB/s", b.get("TFLOP/s"))
        if rate is None and "bytes_per_second" in b:
            rate = b["bytes_per_second"] / 1e9
        if rate is None and "flop_per_second" in b:
            rate = b["flop_per_second"] / 1e12
        if rate is not None:
            target.setdefault(name, []).append(rate)
    for name, rate in medians.items():
        values.setdefault(name, rate)
    context = data.get("context", {})
    device = context.get("tandem_device", "GPU")
    date = context.get("date", "")[:10]
    return {k: statistics.median(v) for k, v in values.items()}, "%s, %s" % (device, date)


def reduce_rate(rates, stage, log2n):
    return rates.get("kernel/cuda/%s/sum/float/n:%d" % (stage, 1 << log2n))


def read_sweep(rates, log2n):
    return rates.get("baseline/read_sweep_batched/float/n:%d" % (1 << log2n))


def chart_reduce(plt, rates, run, out):
    fig, (left, right) = plt.subplots(1, 2, figsize=(15, 5.6), gridspec_kw={"width_ratios": [1, 1.25]})

    # Left: speed-up over rung 1, Harris's seven kernels against the stages that make the same change.
    xs = range(len(HARRIS))
    width = 0.27
    left.bar([x - width for x in xs], HARRIS_CUMULATIVE, width, color="tab:gray", label="Harris, G80, 2^22 ints")
    for offset, (log2n, color) in zip((0, width), ((24, "tab:cyan"), (30, "tab:blue"))):
        base = reduce_rate(rates, HARRIS[0][1], log2n)
        ups = [(reduce_rate(rates, stage, log2n) or 0) / base for _, stage, _ in HARRIS]
        left.bar([x + offset for x in xs], ups, width, color=color,
                 label="tandem, %s, float sum, n = 2^%d" % (run.split(",")[0], log2n))
    for x, up in zip(xs, HARRIS_CUMULATIVE):
        left.text(x - width, up, "%gx" % up, ha="center", va="bottom", fontsize=7)
    left.set_xticks(list(xs))
    left.set_xticklabels([label for label, _, _ in HARRIS], rotation=30, ha="right", fontsize=8)
    left.set_ylabel("speed-up over kernel / rung 1")
    left.set_title("The classic seven steps: Harris's speed-ups against ours")
    left.legend(fontsize=8, loc="upper left")
    left.grid(axis="y", alpha=0.3)

    # Right: every rung's share of the read limit at three sizes, Harris's share of the G80's peak beside.
    positions = {stage: i for i, stage in enumerate(REDUCE_STAGES)}
    for (log2n, label), color in zip(REDUCE_SIZES, ("tab:green", "tab:cyan", "tab:blue")):
        limit = read_sweep(rates, log2n)
        share = [100.0 * (reduce_rate(rates, s, log2n) or 0) / limit for s in REDUCE_STAGES]
        right.plot(range(len(REDUCE_STAGES)), share, "o-", color=color, label="tandem, " + label)
    right.plot([positions[stage] for _, stage, _ in HARRIS],
               [100.0 * gbs / HARRIS_PEAK_GBS for _, _, gbs in HARRIS], "s--", color="tab:gray",
               label="Harris, G80 (share of its 86.4 GB/s peak)")
    right.axhline(100, color="tab:green", linestyle=":", linewidth=1)
    right.set_xticks(range(len(REDUCE_STAGES)))
    right.set_xticklabels(REDUCE_STAGES, rotation=35, ha="right", fontsize=8)
    right.set_ylabel("% of the read limit (read sweep of the same bytes)")
    right.set_ylim(0, 115)
    right.set_title("Where each rung stands against the read limit")
    right.legend(fontsize=8, loc="lower right")
    right.grid(alpha=0.3)

    fig.suptitle("Reduction ladder beside Harris (2007): %s, kernel level (CUDA events)" % run)
    fig.tight_layout()
    path = os.path.join(out, "tutorial_reduce_classic.png")
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def gemm_rates(rates, rates16):
    """{stage: TFLOP/s at GEMM_SIZE^3, float}, and the level they were timed at."""
    kernel = "kernel/cuda/%s/gemm/float/" + GEMM_SIZE
    engine = "matmul/cuda/%s/float/" + GEMM_SIZE
    pattern, level = (kernel, "kernel level") if kernel % "cublas" in rates else (engine, "engine level")
    found = {}
    for s in MATMUL_STAGES:
        v = rates.get(pattern % s)
        if v is None:
            v = rates16.get("float16/cuda/%s/matmul/float/%sx%sx%s" % ((s,) + (GEMM_SIZE,) * 3))
        if v is not None:
            found[s] = v
    return found, level


def chart_gemm(plt, rates, rates16, run, out):
    found, level = gemm_rates(rates, rates16)
    cublas = found["cublas"]
    ours = [(s, found[s] / cublas) for s in MATMUL_STAGES if s in found]
    boehm = [(label, v / BOEHM_CUBLAS) for label, v in BOEHM] + [("0: cuBLAS", 1.0)]

    fig, ax = plt.subplots(figsize=(15, 5.6))
    xs_b = list(range(len(boehm)))
    xs_o = [len(boehm) + 1 + i for i in range(len(ours))]
    ax.bar(xs_b, [v for _, v in boehm], color=["tab:gray"] * (len(boehm) - 1) + ["tab:orange"])
    colors = ["tab:orange" if s.startswith("cublas") else "tab:purple" if ("tensor" in s or "wgmma" in s)
              else "tab:blue" for s, _ in ours]
    ax.bar(xs_o, [v for _, v in ours], color=colors)
    for x, (_, v) in list(zip(xs_b, boehm)) + list(zip(xs_o, ours)):
        ax.text(x, v * 1.08, "%.3g" % v, ha="center", va="bottom", fontsize=7)
    ax.axhline(1.0, color="black", linestyle=":", linewidth=1)
    ax.set_yscale("log")
    ax.set_ylim(0.008, 80)
    ax.set_xticks(xs_b + xs_o)
    ax.set_xticklabels([label for label, _ in boehm] + [s for s, _ in ours], rotation=35, ha="right", fontsize=8)
    ax.set_ylabel("throughput / cuBLAS SGEMM on the same GPU (log scale)")
    ax.text(len(boehm) / 2 - 0.5, 25, "Boehm's worklog: A6000, SGEMM 4096^2,\nfp32 FMA units only",
            ha="center", fontsize=9)
    ax.text(xs_o[len(ours) // 2], 25, "tandem: %s, float, %s^3\nblue: fp32 FMA units, purple: tf32/bf16 "
            "tensor cores, orange: cuBLAS" % (run, GEMM_SIZE), ha="center", fontsize=9)
    ax.set_title("Matmul ladder beside Boehm's SGEMM worklog (tandem: %s): the whole fp32 ladder sits below "
                 "the first tensor-core rung" % level)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    path = os.path.join(out, "tutorial_gemm_classic.png")
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", default=os.path.join(ROOT, "docs", "perf", "json", "bench_cuda_h200.json"))
    parser.add_argument("--gemm-json", default=os.path.join(ROOT, "docs", "perf", "json", "bench_matmul_h200.json"),
                        help="bench_cuda JSON of the matmul families for the GEMM chart (the main JSON if absent)")
    parser.add_argument("--matmul16", default=os.path.join(ROOT, "docs", "perf", "json", "bench_matmul16_h200.json"),
                        help="bench_cuda_float16 JSON for stages the main JSON lacks (skipped if absent)")
    parser.add_argument("--out", default=os.path.join(ROOT, "docs", "perf"))
    args = parser.parse_args(argv)
    try:
        import matplotlib
    except ImportError:
        sys.exit("tutorial_charts: matplotlib not found (apt-get install python3-matplotlib; run /usr/bin/python3)")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rates, run = load_rates(args.json)
    gemm_rates, gemm_run = load_rates(args.gemm_json) if os.path.exists(args.gemm_json) else (rates, run)
    rates16 = load_rates(args.matmul16)[0] if os.path.exists(args.matmul16) else {}
    for path in (chart_reduce(plt, rates, run, args.out), chart_gemm(plt, gemm_rates, rates16, gemm_run, args.out)):
        print("tutorial_charts: wrote " + os.path.relpath(path, os.getcwd()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
