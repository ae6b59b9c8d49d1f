"""tandem on GPU arrays of CuPy and PyTorch, read in place; the work is enqueued on the library's current
stream (nothing waits) and results come back as arrays of the same library. Needs a CUDA GPU and CuPy or
PyTorch, and the interpreter the module was built for:
  PYTHONPATH=build/python python3 examples/python/cupy_torch_example.py"""
import sys

import tandem

try:
    eng = tandem.Engine("cuda")
except tandem.Error as e:  # no usable GPU here: say why and stop (this example needs one)
    print("this example needs a CUDA GPU:", e)
    sys.exit(0)
try:
    import cupy as cp

    x = cp.random.uniform(-1, 1, 1 << 26, dtype=cp.float32)
    s = eng.sum(x, deterministic=True)  # a 0-d CuPy array, computed on the GPU where x lives (float(s) waits)
    print("cupy: sum", float(s), "vs cupy.sum", float(x.sum()))
    print("cupy: per-row max", eng.max(x.reshape(1 << 13, -1), axis=1)[:3])
except ImportError:
    print("no CuPy")
try:
    import torch

    a = torch.randn(4096, 4096, device="cuda")
    b = torch.randn(4096, 4096, device="cuda")
    c = eng.matmul(a, b)  # a torch.Tensor on the same GPU
    print("torch: matmul", tuple(c.shape), c.dtype, "max error", float((c - a @ b).abs().max()))
    print("torch: argmax", int(eng.argmax(a.flatten())), "vs", int(a.flatten().argmax()))
except ImportError:
    print("no PyTorch")
