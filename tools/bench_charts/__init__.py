"""Turns bench_cpu / bench_cuda JSON (Google Benchmark, --benchmark_out_format=json) into PNG charts and
markdown tables for docs/PERFORMANCE.md.

Usage:  python3 tools/bench_charts.py --out docs/perf bench_cuda.json bench_cpu.json > docs/perf/tables.md
        (or python3 -m tools.bench_charts ..., or PYTHONPATH=tools python3 -m bench_charts ...)

Charts (written to --out, one set per backend found in the inputs; "engine" is the reduce/ and matmul/
families, timed around synchronous engine calls, "kernel" the kernel/ family, the ladders timed with CUDA
events on a stream of bench_cuda's own):
  reduce_ladder_<backend>_<level>_float_sum_n<n>.png  GB/s per stage, float sum, at the largest n and at
                                                      2^20, with lines for the read sweep (and CUB on the GPU,
                                                      tbb::parallel_reduce and Eigen sum() on the CPU)
  gemm_<backend>_<level>_<type>.png                   TFLOP/s (GPU) or GFLOP/s (CPU) per stage against the
                                                      square sizes, cuBLAS modes and Eigen baselines included
  strided_<backend>.png                               AoS field (stride 2) against SoA, GB/s per stage
Tables (markdown, to stdout or --tables FILE): the runs, the targets of issues #4 and #14 as ratios (the rows are
data: targets.json), then per-stage tables of every family present.

Kernel properties (precision, vendor baseline) come from the engine's kernel metadata, never from kernel
names: the "tandem_kernels" entry of a run's JSON context (bench_cpu / bench_cuda write it), else the
file given by --kernels, else kernels_<backend>.json beside the input JSON (`tandem kernels --json`).

Several runs of one benchmark (--benchmark_repetitions) count as their median; Google Benchmark's
aggregate rows (_mean, _median, ...) are used only for their median. Names are compared without the
"/real_time" or "/manual_time" suffix. Needs Debian's python3-matplotlib (Agg backend, no display).

Modules: load (the JSON, medians, kernel metadata), names (benchmark names and formatting), targets
(evaluates targets.json), tables, charts, __main__ (arguments).
"""
