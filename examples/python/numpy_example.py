"""tandem from NumPy: build the module (tools/setup.sh builds it when Python, pybind11 and dlpack.h are
found), then run from the repository root:  PYTHONPATH=build/python python3 examples/python/numpy_example.py"""
import numpy as np

import tandem

eng = tandem.Engine()  # TANDEM_BACKEND or auto: the GPU when one is usable, else the CPU
print("backend:", eng.backend, "-", eng.device_info()["name"])

x = np.random.default_rng(0).uniform(-1, 1, 10_000_000).astype(np.float32)
print("sum:", eng.sum(x), " numpy:", x.sum())
print("deterministic sum (the same bits on every backend):", eng.sum(x, deterministic=True))
print("max of every 3rd element (a strided view, read in place):", eng.max(x[::3]))

a = x[:1_000_000].reshape(1000, 1000)
print("per-row sums (axis=1), first three:", eng.sum(a, axis=1)[:3])
print("argmax per column (axis=0), first three:", eng.argmax(a, axis=0)[:3])

c = eng.matmul(a, a.T)  # a.T is read in place as a transpose (trans_b)
print("matmul:", c.shape, c.dtype, "max error against NumPy:", np.abs(c - a @ a.T).max())
try:
    eng.min(np.zeros(0, np.float32))
except tandem.Error as e:  # a RuntimeError with tandem's message
    print("tandem.Error:", e)
