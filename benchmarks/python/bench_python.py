"""tandem's Python module against the array libraries, in one run (issue #13):
  overhead   eng.sum of 16 floats (NumPy) against numpy.sum, and tandem's C++ call seen from Python
  numpy      eng.sum of 2^24 floats against numpy.sum (CPU engine, and the CUDA engine on host data)
  cupy/torch eng.sum of 2^28 floats of a GPU array, in place, against cupy.sum / torch.sum (GB/s)
  C++        with --cxx BUILD: the same calls through the C++ API in the same run (BUILD/benchmarks/bench_cpu
             and bench_cuda: overhead/<backend>/engine/sum/float/n:16, and reduce/cuda/auto/sum/float/n:2^28
             on a tandem Buffer), the baselines the Python calls are measured against
Run: PYTHONPATH=build/python python3 benchmarks/python/bench_python.py [--cxx build] (device rows need a
GPU and CuPy / PyTorch). Prints one table; times are medians of repeated calls."""
import argparse
import json
import os
import statistics
import subprocess
import time

import numpy as np

import tandem


def median_time(f, repeat=50, warmup=3, sync=None):
    for _ in range(warmup):
        f()
    if sync:
        sync()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        f()
        if sync:
            sync()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


parser = argparse.ArgumentParser()
parser.add_argument("--cxx", help="build folder whose benchmarks/bench_cpu and bench_cuda give the C++ baselines")
args = parser.parse_args()


def cxx_seconds(binary, name):
    """Real time of one call of the C++ benchmark `name` (Google Benchmark, run now), or None."""
    path = os.path.join(args.cxx or "", "benchmarks", binary)
    if not args.cxx or not os.path.exists(path):
        return None
    out = subprocess.run([path, f"--benchmark_filter=^{name}/real_time$", "--benchmark_format=json",
                          "--benchmark_min_time=0.5"],  # (long enough that the first, cold call is not the one timed)
                         capture_output=True, text=True)
    found = [b for b in json.loads(out.stdout or "{}").get("benchmarks", []) if b.get("run_type") == "iteration"]
    if not found:
        return None
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[found[0]["time_unit"]]
    return found[0]["real_time"] * scale


rows = []
small = np.arange(16, dtype=np.float32)
numpy_small_us = median_time(lambda: small.sum(), 2000) * 1e6


def overhead_rows(name, eng, binary, backend):
    """One Python timing of eng.sum(small), against numpy.sum and (with --cxx) the same C++ call."""
    mine = median_time(lambda: eng.sum(small), 2000) * 1e6
    rows.append((name, mine, "numpy.sum", numpy_small_us))
    t = cxx_seconds(binary, f"overhead/{backend}/engine/sum/float/n:16")
    if t is not None:
        rows.append((name, mine, "C++ eng.sum", t * 1e6))


cpu = tandem.Engine("cpu")
overhead_rows("overhead: tandem cpu sum, 16 floats (us)", cpu, "bench_cpu", "cpu")
big = np.random.default_rng(0).uniform(-1, 1, 1 << 24).astype(np.float32)
t = median_time(lambda: cpu.sum(big), 20)
rows.append(("numpy 2^24 floats: tandem cpu sum (GB/s)", big.nbytes / t / 1e9,
             "numpy.sum", big.nbytes / median_time(lambda: big.sum(), 20) / 1e9))
if "cuda: usable" in tandem.info():
    gpu = tandem.Engine("cuda")
    overhead_rows("overhead: tandem cuda sum, 16 host floats (us)", gpu, "bench_cuda", "cuda")
    n = 1 << 28
    t_buffer = cxx_seconds("bench_cuda", f"reduce/cuda/auto/sum/float/n:{n}")
    try:
        import cupy as cp
        x = cp.random.uniform(-1, 1, n, dtype=cp.float32)
        sync = cp.cuda.Device().synchronize
        rows.append(("cupy 2^28 floats in place: tandem sum (GB/s)", x.nbytes / median_time(lambda: gpu.sum(x), 50, sync=sync) / 1e9,
                     "cupy.sum", x.nbytes / median_time(lambda: x.sum(), 50, sync=sync) / 1e9))
        if t_buffer is not None:  # issue #13's target: >= 0.9x the same call on a tandem Buffer
            rows.append(("cupy 2^28 floats in place: tandem sum (GB/s)", rows[-1][1], "C++ Buffer", x.nbytes / t_buffer / 1e9))
        rows.append(("cupy 2^28 floats: tandem deterministic sum (GB/s)",
                     x.nbytes / median_time(lambda: gpu.sum(x, deterministic=True), 50, sync=sync) / 1e9, "", float("nan")))
    except ImportError:
        pass
    try:
        import torch
        y = torch.rand(n, device="cuda")
        sync = torch.cuda.synchronize
        rows.append(("torch 2^28 floats in place: tandem sum (GB/s)", y.numel() * 4 / median_time(lambda: gpu.sum(y), 50, sync=sync) / 1e9,
                     "torch.sum", y.numel() * 4 / median_time(lambda: y.sum(), 50, sync=sync) / 1e9))
        if t_buffer is not None:
            rows.append(("torch 2^28 floats in place: tandem sum (GB/s)", rows[-1][1], "C++ Buffer", n * 4 / t_buffer / 1e9))
    except ImportError:
        pass
print(f"{'case':52} {'tandem':>10}  {'baseline':12} {'value':>10}  ratio")
for name, mine, base, theirs in rows:
    ratio = mine / theirs if "us" not in name else theirs / mine
    print(f"{name:52} {mine:10.2f}  {base:12} {theirs:10.2f}  {ratio:.2f}")
