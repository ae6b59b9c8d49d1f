"""tandem's Python module against NumPy, CuPy and PyTorch, in one run: per-call cost and throughput of the
same call on the same arrays. Prints one table (ratio: > 1 means tandem is faster) and, with --json FILE,
writes the rows for the docs' results tables.

  host    NumPy arrays: per-call cost of a 64-element sum; every op over every axis of 10^5..10^7 elements;
          the k-means step (per-row argmin / min of a 200000 x 16 float32 matrix); topk (k = 8, 64) of
          1024 x 32000 float32 against np.argpartition + sort
  device  PyTorch / CuPy GPU arrays (CUDA engine): per-call cost of a 64-element sum (calls enqueued back to
          back, then one synchronize: what a Python loop pays per call); sum and argmax of 2^28 floats; row
          and column sums of 2^14 x 2^14; the k-means step on the GPU (per-row argmin / min / sum of 200000 x 16
          float32); bf16 and fp16 matmul 8192^3 against `a @ b`; topk (k = 1, 8, 64, 1024, 2048) of 4096 x
          32000 float32 logits against torch.topk, and their argsort against torch.argsort(stable=True)

Run: PYTHONPATH=build/python /usr/bin/python3 benchmarks/python/bench_python.py [--json results.json] [--quick]
(the interpreter the module was built for; device rows need a GPU and CuPy / PyTorch). Times are medians."""
import argparse
import json
import os
import statistics
import time

import numpy as np

import tandem

parser = argparse.ArgumentParser()
parser.add_argument("--json", help="write the rows to this file")
parser.add_argument("--quick", action="store_true", help="smaller repetitions (a smoke run)")
args = parser.parse_args()
REPEAT = 3 if args.quick else 7


def median_seconds(f, calls=1, sync=None, repeat=None):
    """Median over repetitions of the time per call of `calls` back-to-back calls of f (then sync)."""
    f()
    if sync:
        sync()
    times = []
    for _ in range(repeat or REPEAT):
        t0 = time.perf_counter()
        for _ in range(calls):
            f()
        if sync:
            sync()
        times.append((time.perf_counter() - t0) / calls)
    return statistics.median(times)


rows = []  # (group, case, unit, tandem, baseline name, baseline)


def row(group, case, unit, mine, base, theirs):
    rows.append({"group": group, "case": case, "unit": unit, "tandem": mine, "baseline": base, "baseline_value": theirs,
                 "ratio": (theirs / mine) if unit == "us" or unit == "ms" else (mine / theirs)})


# ---- device (PyTorch, CuPy) ----------------------------------------------------------------------
def device_rows():
    if "cuda: usable" in tandem.info():
        gpu = tandem.Engine("cuda")
        n = 1 << (24 if args.quick else 28)
        try:
            import torch
            sync = torch.cuda.synchronize
            t64 = torch.arange(64, dtype=torch.float32, device="cuda")
            calls = 200 if args.quick else 2000
            row("torch", "sum of 64 float32, per call", "us", median_seconds(lambda: gpu.sum(t64), calls, sync) * 1e6,
                "torch.sum", median_seconds(lambda: torch.sum(t64), calls, sync) * 1e6)
            with torch.cuda.stream(torch.cuda.Stream()):  # (another engine of tandem's, on that stream)
                row("torch", "sum of 64 float32 on a side stream, per call", "us",
                    median_seconds(lambda: gpu.sum(t64), calls, sync) * 1e6, "torch.sum",
                    median_seconds(lambda: torch.sum(t64), calls, sync) * 1e6)
            y = torch.rand(n, device="cuda")
            for op in ("sum", "argmax", "min"):
                row("torch", f"{op} of 2^{n.bit_length() - 1} float32", "GB/s",
                    y.numel() * 4 / median_seconds(lambda: getattr(gpu, op)(y), 5, sync) / 1e9, f"torch.{op}",
                    y.numel() * 4 / median_seconds(lambda: getattr(torch, op)(y), 5, sync) / 1e9)
            side = 1 << (12 if args.quick else 14)
            mat = torch.rand(side, side, device="cuda")
            for axis, what in ((1, "row"), (0, "column")):
                row("torch", f"{what} sums of {side} x {side} float32", "GB/s",
                    mat.numel() * 4 / median_seconds(lambda: gpu.sum(mat, axis=axis), 5, sync) / 1e9,
                    f"torch.sum(dim={axis})", mat.numel() * 4 / median_seconds(lambda: torch.sum(mat, dim=axis), 5, sync) / 1e9)
            km = torch.rand(200000, 16, device="cuda") * 2 - 1  # the k-means step's distances
            for op, theirs in (("argmin", torch.argmin), ("min", torch.amin), ("sum", torch.sum)):
                row("torch", f"k-means step: {op} per row of 200000 x 16 float32", "ms",
                    median_seconds(lambda: getattr(gpu, op)(km, axis=1), 50, sync) * 1e3, f"torch.{theirs.__name__}(dim=1)",
                    median_seconds(lambda: theirs(km, dim=1), 50, sync) * 1e3)
            k = 2048 if args.quick else 8192
            for dt in (torch.bfloat16, torch.float16):
                a = torch.randn(k, k, device="cuda", dtype=dt)
                b = torch.randn(k, k, device="cuda", dtype=dt)
                flop = 2.0 * k ** 3
                row("torch", f"{str(dt)[6:]} matmul {k}^3", "TFLOP/s",
                    flop / median_seconds(lambda: gpu.matmul(a, b), 5, sync) / 1e12, "a @ b",
                    flop / median_seconds(lambda: a @ b, 5, sync) / 1e12)
            # top-k of a vocabulary-sized row: 4096 x 32000 float32 logits, k <= 64 (and 1024)
            rows_, vocab = (512, 32000) if args.quick else (4096, 32000)
            logits = torch.randn(rows_, vocab, device="cuda")
            for kk in (1, 8, 64, 1024, 2048):
                row("torch", f"topk k={kk} of {rows_} x {vocab} float32", "ms",
                    median_seconds(lambda: gpu.topk(logits, kk), 20, sync) * 1e3, "torch.topk",
                    median_seconds(lambda: torch.topk(logits, kk), 20, sync) * 1e3)
            row("torch", f"argsort of {rows_} x {vocab} float32", "ms",
                median_seconds(lambda: gpu.argsort(logits), 5, sync) * 1e3, "torch.argsort(stable=True)",
                median_seconds(lambda: torch.argsort(logits, stable=True), 5, sync) * 1e3)
            del y, mat, a, b, logits
            torch.cuda.empty_cache()
        except ImportError:
            pass
        try:
            import cupy as cp
            sync = cp.cuda.Device().synchronize
            c64 = cp.arange(64, dtype=cp.float32)
            calls = 200 if args.quick else 2000
            row("cupy", "sum of 64 float32, per call", "us", median_seconds(lambda: gpu.sum(c64), calls, sync) * 1e6,
                "cupy.sum", median_seconds(lambda: cp.sum(c64), calls, sync) * 1e6)
            x = cp.random.uniform(-1, 1, n, dtype=cp.float32)
            for op in ("sum", "argmax"):
                row("cupy", f"{op} of 2^{n.bit_length() - 1} float32", "GB/s",
                    x.nbytes / median_seconds(lambda: getattr(gpu, op)(x), 5, sync) / 1e9, f"cupy.{op}",
                    x.nbytes / median_seconds(lambda: getattr(cp, op)(x), 5, sync) / 1e9)
        except ImportError:
            pass


# ---- host (NumPy) ----------------------------------------------------------------------------------
def host_rows():
    cpu = tandem.Engine("cpu")
    small = np.arange(64, dtype=np.float32)
    calls = 2000 if args.quick else 20000
    row("numpy", "sum of 64 float32, per call", "us", median_seconds(lambda: cpu.sum(small), calls) * 1e6,
        "x.sum()", median_seconds(lambda: small.sum(), calls) * 1e6)
    rng = np.random.default_rng(0)
    for n_side in ((316, 3162) if args.quick else (316, 1000, 3162)):  # 10^5, 10^6, 10^7 elements
        m = rng.uniform(-1, 1, (n_side, n_side)).astype(np.float32)
        for op in tandem.ops:
            theirs = {"sumsq": lambda x, axis: np.einsum("ij,ij->" + {None: "", 0: "j", 1: "i"}[axis], x, x)}.get(
                op, lambda x, axis, op=op: getattr(x, op)(axis=axis))
            for axis in (None, 0, 1):
                mine = median_seconds(lambda: getattr(cpu, op)(m, axis=axis), 3) * 1e3
                base = median_seconds(lambda: theirs(m, axis), 3) * 1e3
                row("numpy", f"{op} of {m.size:.0e} float32, axis={axis}", "ms", mine, f"numpy {op}", base)
    logits = rng.standard_normal((256 if args.quick else 1024, 32000)).astype(np.float32)

    def numpy_topk(x, k):  # argpartition, then the k sorted (most extreme first)
        part = np.argpartition(-x, k - 1, axis=1)[:, :k]
        vals = np.take_along_axis(x, part, axis=1)
        order = np.argsort(-vals, axis=1, kind="stable")
        return np.take_along_axis(vals, order, axis=1), np.take_along_axis(part, order, axis=1)

    for kk in (8, 64):
        row("numpy", f"topk k={kk} of {logits.shape[0]} x 32000 float32", "ms",
            median_seconds(lambda: cpu.topk(logits, kk), 3) * 1e3, "np.argpartition + sort",
            median_seconds(lambda: numpy_topk(logits, kk), 3) * 1e3)
    km = rng.uniform(-1, 1, (200000, 16)).astype(np.float32)
    for op in ("argmin", "min", "sum"):
        row("numpy", f"k-means step: {op} per row of 200000 x 16 float32", "ms",
            median_seconds(lambda: getattr(cpu, op)(km, axis=1), 5) * 1e3, f"x.{op}(axis=1)",
            median_seconds(lambda: getattr(km, op)(axis=1), 5) * 1e3)


# (The GPU rows first: the CPU engine's worker threads of the host rows stay awake for a while after them.)
device_rows()
host_rows()
def host():
    """The machine the run was made on: its CPU model and core count (the NumPy rows' speed depends on them)."""
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            model = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "")
    except OSError:
        pass
    return {"cpu": model, "cores": os.cpu_count()}


print(f"{'case':58} {'unit':>7} {'tandem':>10}  {'baseline':22} {'value':>10}  ratio")
for r in rows:
    print(f"{r['group'] + ': ' + r['case']:58} {r['unit']:>7} {r['tandem']:10.3f}  {r['baseline']:22} "
          f"{r['baseline_value']:10.3f}  {r['ratio']:.2f}")
if args.json:
    with open(args.json, "w") as f:
        json.dump({"tandem": tandem.__version__, "numpy": np.__version__, "host": host(), "rows": rows}, f, indent=1)
