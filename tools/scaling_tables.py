#!/usr/bin/python3
"""The measured tables of docs/SCALING.md, made from the committed Google Benchmark JSON.

Each table sits between "<!-- generated: NAME -->" and "<!-- end generated: NAME -->" in the page.
  python3 tools/scaling_tables.py           rewrites them from docs/perf/json/
  python3 tools/scaling_tables.py --check   exit 1 (with a diff) when the page differs from the JSON
Python 3's standard library only.
"""
import difflib
import json
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "SCALING.md"
JSON = ROOT / "docs" / "perf" / "json"


def load(name):
    """name -> the benchmark's record: the median of repetitions where there are some, else the one run."""
    out = {}
    for b in json.loads((JSON / name).read_text())["benchmarks"]:
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
            continue
        key = re.sub(r"/(iterations:\d+/)?(manual_time|real_time)(_median)?$", "", b["name"])
        out[key] = b
    return out


def value(runs, key, counter):
    return runs[key][counter]


def num(x):
    return f"{x:.0f}" if x >= 100 else f"{x:.3g}"


def met(ratio, target):
    return f">= {target}x: {'met' if ratio >= target else 'missed'}"


def multi_gpu():
    s = load("multi_gpu_h200x4_sum.json")
    m = load("multi_gpu_h200x4_matmul.json")
    h = load("multi_gpu_h200x4_sharded.json")
    rows = [("case", "1 GPU", "4 GPUs", "ratio", "target"), ("---",) * 5]

    def add(label, runs, key, counter, scale, unit, target, note=""):
        one = value(runs, key + "/gpus:1", counter) / scale
        four = value(runs, key + "/gpus:4", counter) / scale
        ratio = four / one
        rows.append((f"{label} ({unit})", num(one), num(four), f"**{ratio:.2f}x**{note}", met(ratio, target)))
        return four

    plain = add("sum of 2^32 floats, Buffer", s, "multi/sum/buffer/float/4294967296", "bytes_per_second", 1e9, "GB/s",
                3.5)
    det4 = value(s, "multi/sum_det/buffer/float/4294967296/gpus:4", "bytes_per_second") / 1e9
    add("the same, deterministic", s, "multi/sum_det/buffer/float/4294967296", "bytes_per_second", 1e9, "GB/s", 3.5,
        f"; {det4 / plain:.2f}x of the plain 4-GPU sum (target >= 0.95x: {'met' if det4 / plain >= 0.95 else 'missed'})")
    add("fp32 GEMM 16384^3, Buffers, B sent in panels", m, "multi/matmul/float/16384", "flop_per_second", 1e12,
        "TFLOP/s", 3.8)
    add("bf16 GEMM 16384^3 (float C), B broadcast first", m, "multi/matmul/bfloat16/16384", "flop_per_second", 1e12,
        "TFLOP/s", 3.7)
    add("per-row sums of a 32768 x 32768 float Buffer", h, "multi/sum_rows/buffer/float/32768x32768",
        "bytes_per_second", 1e9, "GB/s", 3.5)
    add("64 bf16 products 2048^3, Buffers", h, "multi/matmul_batched/bfloat16/64x2048", "flop_per_second", 1e12,
        "TFLOP/s", 3.5)
    return rows


def multi_gpu_two():
    r = load("multi_gpu_h200x2.json")
    rows = [("case", "1 GPU", "2 GPUs", "ratio", "target"), ("---",) * 5]
    cases = [("sum of 2^31 floats, Buffer", "multi/sum/buffer/float/2147483648", "bytes_per_second", 1e9, "GB/s", None),
             ("the same, deterministic", "multi/sum_det/buffer/float/2147483648", "bytes_per_second", 1e9, "GB/s",
              None),
             ("fp32 GEMM 16384^3, Buffers, B sent in panels", "multi/matmul/float/16384", "flop_per_second", 1e12,
              "TFLOP/s", 1.9),
             ("bf16 GEMM 16384^3 (float C), B broadcast first", "multi/matmul/bfloat16/16384", "flop_per_second", 1e12,
              "TFLOP/s", 1.9),
             ("per-row sums of a 32768 x 32768 float Buffer", "multi/sum_rows/buffer/float/32768x32768",
              "bytes_per_second", 1e9, "GB/s", None),
             ("per-column sums, rows split (lab builds only)", "multi/sum_cols/buffer/float/32768x32768",
              "bytes_per_second", 1e9, "GB/s", None),
             ("the same, deterministic (lab builds only)", "multi/sum_cols_det/buffer/float/32768x32768",
              "bytes_per_second", 1e9, "GB/s", None),
             ("64 bf16 products 2048^3, Buffers", "multi/matmul_batched/bfloat16/64x2048", "flop_per_second", 1e12,
              "TFLOP/s", None)]
    for label, key, counter, scale, unit, target in cases:
        one, two = (value(r, f"{key}/gpus:{g}", counter) / scale for g in (1, 2))
        rows.append((f"{label} ({unit})", num(one), num(two), f"**{two / one:.2f}x**",
                     met(two / one, target) if target else ""))
    return rows


def mpi():
    runs = {p: load(f"mpi_h200x4_cuda_np{p}.json") for p in (1, 2, 4)}
    cpu = {p: load(f"mpi_h200x4_cpu_np{p}.json") for p in (1, 2)}
    rows = [("case", "1 rank", "2 ranks", "4 ranks", "4 ranks / 1"), ("---",) * 5]
    cases = [("CUDA: sum of 2^32 floats, a Buffer per rank", "mpi/sum/buffer/float/4294967296", "bytes_per_second",
              1e9, "GB/s"),
             ("CUDA: the same, deterministic", "mpi/sum_det/buffer/float/4294967296", "bytes_per_second", 1e9, "GB/s"),
             ("CUDA: fp32 GEMM 16384^3, rows per rank", "mpi/matmul/float/16384", "flop_per_second", 1e12, "TFLOP/s"),
             ("CUDA: bf16 GEMM 16384^3, rows per rank", "mpi/matmul/bfloat16/16384", "flop_per_second", 1e12,
              "TFLOP/s")]
    for label, key, counter, scale, unit in cases:
        v = [value(runs[p], f"{key}/ranks:{p}", counter) / scale for p in (1, 2, 4)]
        rows.append((f"{label} ({unit})", *(num(x) for x in v), f"**{v[2] / v[0]:.2f}x**"))
    cpu_cases = [("CPU: sum of 2^28 floats", "mpi/sum/buffer/float/268435456", "bytes_per_second", 1e9, "GB/s"),
                 ("CPU: the same, deterministic", "mpi/sum_det/buffer/float/268435456", "bytes_per_second", 1e9,
                  "GB/s"),
                 ("CPU: fp32 GEMM 2048^3", "mpi/matmul/float/2048", "flop_per_second", 1e9, "GFLOP/s"),
                 ("CPU: bf16 GEMM 2048^3", "mpi/matmul/bfloat16/2048", "flop_per_second", 1e9, "GFLOP/s")]
    for label, key, counter, scale, unit in cpu_cases:
        v = [value(cpu[p], f"{key}/ranks:{p}", counter) / scale for p in (1, 2)]
        rows.append((f"{label} ({unit})", num(v[0]), num(v[1]), "", f"2 ranks: {v[1] / v[0]:.2f}x"))
    return rows


def all_reduce():
    rows = [("ranks", "vector", "ncclAllReduce", "plain", "deterministic", "deterministic / NCCL",
             "its all-to-all alone"), ("---",) * 7]
    for p in (2, 4):
        r = load(f"mpi_h200x4_cuda_np{p}.json")
        for dtype, size in (("float", 1 << 20), ("float", 1 << 24), ("float", 1 << 28), ("bfloat16", 1 << 28)):
            def bw(variant):
                return value(r, f"mpi/all_reduce/{variant}/{dtype}/{size}/ranks:{p}", "bus_bytes_per_second") / 1e9

            nccl, det = bw("nccl"), bw("deterministic")
            a2a = value(r, f"mpi/all_reduce/nccl_alltoall/{dtype}/{size}/ranks:{p}", "real_time")
            mark = f" ({'met' if det / nccl >= 0.8 else 'missed'}: >= 0.8x)" if size == 1 << 28 and p == 4 else ""
            rows.append((str(p), f"{size >> 20} MiB {dtype}", f"{nccl:.0f}", f"{bw('plain'):.0f}", f"{det:.0f}",
                         f"**{det / nccl:.2f}x**{mark}", f"{a2a:.3f} ms"))
    return rows


TABLES = {"scaling-multi-gpu": multi_gpu, "scaling-multi-gpu-2": multi_gpu_two, "scaling-mpi": mpi, "scaling-all-reduce": all_reduce}


def render(rows):
    return "\n".join("| " + " | ".join(r) + " |" for r in rows) + "\n"


def main():
    text = PAGE.read_text()
    new = text
    for name, make in TABLES.items():
        start, end = f"<!-- generated: {name} -->\n", f"<!-- end generated: {name} -->"
        if start not in new or end not in new:
            sys.exit(f"scaling_tables: docs/SCALING.md has no '{start.strip()}' ... '{end}' block")
        a = new.index(start) + len(start)
        new = new[:a] + render(make()) + new[new.index(end):]
    if "--check" in sys.argv[1:]:
        if new != text:
            sys.stdout.writelines(difflib.unified_diff(text.splitlines(True), new.splitlines(True),
                                                       "docs/SCALING.md (committed)", "docs/SCALING.md (from the JSON)"))
            sys.exit("scaling_tables: docs/SCALING.md's tables differ from the JSON: run python3 tools/scaling_tables.py")
        print("scaling_tables: docs/SCALING.md's tables match the committed JSON")
        return
    PAGE.write_text(new)


if __name__ == "__main__":
    main()
