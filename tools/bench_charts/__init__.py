"""Turns bench_cpu / bench_cuda / bench_multi_gpu JSON (Google Benchmark, --benchmark_out_format=json) into
PNG charts, markdown tables and the generated sections of docs/PERFORMANCE.md.

Usage:  python3 tools/bench_charts.py --page docs/PERFORMANCE.md --tables docs/perf/tables.md --out docs/perf
          (the JSON files the page names on its "<!-- bench_charts inputs: ... -->" line; --no-charts: no
          matplotlib needed; tools/check_results.sh compares the result with the committed files)
        python3 tools/bench_charts.py --out DIR bench_cuda.json bench_cpu.json > tables.md
        (or python3 -m tools.bench_charts ..., or PYTHONPATH=tools python3 -m bench_charts ...)

Page (page.py): docs/PERFORMANCE.md is written by hand around sections marked
"<!-- generated: NAME -->" ... "<!-- end generated -->", whose contents this package writes from the JSON;
a measured-looking number in the hand-written prose is an error.

Charts (written to --out, one set per backend found in the inputs; "engine" is the reduce/ and matmul/
families, timed around synchronous engine calls, "kernel" the kernel/ family, the ladders timed with CUDA
events on a stream of bench_cuda's own):
  reduce_ladder_<backend>_<level>_float_sum_n<n>.png  GB/s per stage, float sum, at the largest n and at
                                                      2^20, with lines for the read sweep (and CUB on the GPU,
                                                      tbb::parallel_reduce and Eigen sum() on the CPU)
  gemm_<backend>_<level>_<type>.png                   TFLOP/s (GPU) or GFLOP/s (CPU) per stage against the
                                                      square sizes, cuBLAS modes and Eigen baselines included
  strided_<backend>.png                               AoS field (stride 2) against SoA, GB/s per stage
Tables (markdown, to stdout or --tables FILE): the runs, the targets as ratios (the rows are data:
targets.json), then per-stage tables of every family present and the vendor comparisons.

Kernel properties (precision, vendor baseline) come from the engine's kernel metadata, never from kernel
names: the "tandem_kernels" entry of a run's JSON context (bench_cpu / bench_cuda write it), else the
file given by --kernels, else kernels_<backend>.json beside the input JSON (`tandem kernels --json`).

Counters: bytes_per_second, sweep_bytes_per_second and flop_per_second (what bench_* write), or GB/s,
pct_sweep, TFLOP/s and GFLOP/s (JSON written before them); load.rates_of reads both.

Several runs of one benchmark (--benchmark_repetitions) count as their median; Google Benchmark's
aggregate rows (_mean, _median, ...) are used only for their median. Names are compared without the
"/real_time" or "/manual_time" suffix. Several files of one backend (a suite run in parts, or a second
run of some families) make one run: each adds its benchmarks, a later file's result replaces an earlier
one of the same name (with a warning), the first file's context is the run's, and the machines and runs
tables list every file with its context's "tandem_run_note" (how it was run) where it has one. The charts need Debian's python3-matplotlib (Agg backend, no
display); the tables and the page need Python 3's standard library only.

Modules: load (the JSON, counters, medians, kernel metadata), names (benchmark names and formatting),
targets (evaluates targets.json), tables, charts, page (docs/PERFORMANCE.md's sections), __main__
(arguments).
"""
