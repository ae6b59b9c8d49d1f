"""tandem's Python module on NumPy arrays (issue #13): every op and axis against NumPy on odd shapes,
strided and transposed views, dtypes, the NaN and empty rules, errors, matmul forms, and deterministic
sums bit for bit against an independent implementation of the canonical order (below). Runs on the CPU
engine always and on the CUDA engine where a GPU is usable."""
import warnings

import numpy as np
import pytest

import tandem
from numpy_conventions import NUMPY_OPS, PRODUCTS, TERMS

BACKENDS = [b["name"] for b in tandem.backend_status() if b["usable"]]
SHAPES_1D = [1, 2, 7, 31, 33, 4095, 4097, 65537]
# The module's tables (the ops and element types of include/tandem/ops.hpp and dtype.hpp); bfloat16 is
# NumPy's only through ml_dtypes (test_bfloat16_through_ml_dtypes).
DTYPES = [np.dtype(name) for name in tandem.dtypes if name != "bfloat16"]
FLOAT_DTYPES = [d for d in DTYPES if d.kind == "f"]
OPS = list(tandem.ops)


def kind(op):
    """What op returns (tandem.op_info): 'sum', 'value', 'mean' or 'index'."""
    return tandem.op_info[op]["result"]


@pytest.fixture(params=BACKENDS, scope="module")
def eng(request):
    return tandem.Engine(request.param)


def values(shape, dtype, seed=1):
    rng = np.random.default_rng(seed)
    if np.issubdtype(dtype, np.integer):  # (within int8; unsigned types from 0)
        low = 0 if np.dtype(dtype).kind == "u" else -100 if np.dtype(dtype).itemsize == 1 else -1000
        return rng.integers(low, 100 if np.dtype(dtype).itemsize == 1 else 1000, size=shape).astype(dtype)
    return rng.uniform(-1, 1, size=shape).astype(dtype)


def numpy_result(op, x, axis=None):
    """NumPy's answer for each op of the table, from numpy_conventions' NUMPY_OPS and TERMS (an op without
    them there fails the tests: add its reference)."""
    if op in PRODUCTS:  # in 64 bits (integers wrapping) or float64, then the input's float type (16-bit: float32)
        if x.dtype.kind in "iub":
            wide = np.uint64 if x.dtype.kind == "u" else np.int64
            return np.prod(x.astype(wide), axis=axis, dtype=wide)
        return np.prod(x.astype(np.float64), axis=axis).astype(np.float32 if x.dtype == np.float16 else x.dtype)
    if kind(op) == "sum" and x.dtype.kind in "iub":  # terms and sums in 64 bits, wrapping (bool: a count)
        wide = np.uint64 if x.dtype.kind == "u" else np.int64  # (NumPy's sums of unsigned integers: uint64)
        return np.sum(TERMS[op](x.astype(wide)), axis=axis, dtype=wide)
    if kind(op) != "index" and x.dtype == np.float16:
        x = x.astype(np.float32)  # tandem reads 16-bit inputs as the floats they convert to
    if kind(op) == "mean":
        return np.mean(TERMS[op](x), axis=axis, dtype=np.float64)
    if kind(op) == "sum":
        return np.sum(TERMS[op](x.astype(np.float64)), axis=axis).astype(x.dtype)
    if kind(op) == "index" and np.issubdtype(x.dtype, np.floating):
        if axis is None:
            return np.int64(signed_zero_arg(op, x.ravel()))
        return np.apply_along_axis(lambda v: signed_zero_arg(op, v), axis, x).astype(np.int64)
    return NUMPY_OPS[op](x, axis=axis)


def signed_zero_arg(op, v):
    """np.argmin / argmax with tandem's (IEEE 754's totalOrder) rule for zeros: -0.0 is less than +0.0.
    NumPy takes them as equal and returns the first zero."""
    nan = np.flatnonzero(np.isnan(v))
    if len(nan):
        return nan[0]
    best = v.min() if op == "argmin" else v.max()
    ties = np.flatnonzero(v == best)
    if best == 0:
        preferred = np.signbit(v[ties]) if op == "argmin" else ~np.signbit(v[ties])
        if preferred.any():
            return ties[preferred][0]
    return ties[0]


def result_rounding(dtype):
    """(eps, smallest subnormal, largest value) of a float result type: the one rounding of a result
    computed wider (float16 and bfloat16 results are computed in float32 and rounded once)."""
    if dtype.name == "bfloat16":
        import ml_dtypes
        fi = ml_dtypes.finfo(dtype)
    else:
        fi = np.finfo(dtype)
    return float(fi.eps), float(fi.smallest_subnormal), float(fi.max)


def check(op, got, want, x, axis=None):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape
    if kind(op) in ("index", "value") or np.issubdtype(x.dtype, np.integer) or x.dtype == np.bool_:
        np.testing.assert_array_equal(got, want)
    elif op in PRODUCTS:  # n roundings of the compute type (relative; below its normal range, absolute),
        # plus the result's one rounding to its type; infinities and NaN as NumPy's
        n = x.size if want.ndim == 0 else x.size // max(want.size, 1)
        fi = np.finfo(np.float32 if x.dtype != np.float64 else np.float64)
        eps_r, tiny, top = result_rounding(got.dtype)
        want, g = want.astype(np.float64), got.astype(np.float64)
        bound = (n + 2) * float(fi.eps) * np.abs(want) + float(fi.tiny)
        bound = bound + eps_r * (np.abs(want) + bound) + tiny
        with np.errstate(invalid="ignore"):
            same = (g == want) | (np.isnan(g) & np.isnan(want))
            near = np.isfinite(want) & (np.abs(g - want) <= bound)
            overflow = np.isinf(g) & (np.abs(want) + bound >= top)
        assert (same | near | overflow).all(), f"{op}: {got!r} vs {want!r} within {bound!r}"
    else:  # float sums in another order: within 4 n u of the sum of the terms' magnitudes,
        # plus the result's one rounding to its type
        n = x.size if want.ndim == 0 else x.size // max(want.size, 1)
        u = np.finfo(np.float32 if x.dtype != np.float64 else np.float64).eps
        wide = np.abs(x.astype(np.float64))
        magnitude = np.sum(np.abs(TERMS[op](wide)), axis=axis) / (n if kind(op) == "mean" else 1)
        eps_r, tiny, top = result_rounding(got.dtype)
        want = want.astype(np.float64)
        bound = 4 * n * u * magnitude
        bound = bound + eps_r * (np.abs(want) + bound) + tiny
        wide_got = got.astype(np.float64)
        overflow = np.isinf(wide_got) & (np.abs(want) + bound >= top)  # (a float16 sum of squares past 65504)
        np.testing.assert_array_less(np.where(overflow, 0, np.abs(wide_got - want)), bound)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SHAPES_1D)
def test_every_op_on_vectors(eng, dtype, n):
    x = values(n, dtype, seed=n)
    for op in OPS:
        check(op, getattr(eng, op)(x), numpy_result(op, x), x)
        check(op, getattr(eng, op)(x[::3]), numpy_result(op, x[::3]), x[::3])  # a strided view


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (3, 5), (257, 33), (2, 4097)])
def test_axes_and_views(eng, dtype, shape):
    a = values(shape, dtype, seed=shape[0])
    views = [a, a.T, a[:, 1:] if shape[1] > 1 else a, a[::2, ::2], np.asfortranarray(a)]
    for v in views:
        for op in OPS:
            check(op, getattr(eng, op)(v), numpy_result(op, v), v)  # flattened in C order
            for axis in (0, 1, -1):
                check(op, getattr(eng, op)(v, axis=axis), numpy_result(op, v, axis), v, axis)


def test_results_are_numpy_types(eng):
    x = values(100, np.float32)
    assert isinstance(eng.sum(x), np.float32)
    assert isinstance(eng.sum(x.astype(np.int32)), np.int64)
    assert isinstance(eng.mean(x), np.float32)  # NumPy's: floats keep their type
    assert isinstance(eng.mean(x.astype(np.int32)), np.float64)  # integer means are float64
    assert isinstance(eng.sum(x.astype(np.float16)), np.float16)
    assert isinstance(eng.mean(x.astype(np.float64)), np.float64)
    assert isinstance(eng.argmax(x), np.int64)
    assert eng.argmin(values((4, 5), np.float64), axis=1).dtype == np.int64


def test_nan_and_empty_rules(eng):
    x = values(5000, np.float32)
    x[1234] = np.nan
    x[3000] = np.nan
    assert np.isnan(eng.sum(x)) and np.isnan(eng.min(x)) and np.isnan(eng.max(x))
    assert eng.argmin(x) == 1234 and eng.argmax(x) == 1234
    empty = np.zeros(0, np.float32)
    for op in OPS:  # tandem.op_info's rule: 'zero' gives 0, 'nan' NaN with a RuntimeWarning, 'error' raises
        if tandem.op_info[op]["empty"] in ("zero", "one"):
            assert getattr(eng, op)(empty) == (1.0 if tandem.op_info[op]["empty"] == "one" else 0.0)
        elif tandem.op_info[op]["empty"] == "nan":
            with pytest.warns(RuntimeWarning, match="empty"):
                assert np.isnan(getattr(eng, op)(empty))
        else:
            with pytest.raises(tandem.Error, match="empty"):
                getattr(eng, op)(empty)
        try:  # the rule is NumPy's: 0 where NumPy answers 0 (sums of nothing), NaN where it says nan, else an error
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                want = numpy_result(op, np.zeros(0, np.float64))
        except ValueError:
            want = None
        rule = ("error" if want is None else "zero" if want == 0 else "one" if want == 1
                else "nan" if np.isnan(want) else want)
        assert rule == tandem.op_info[op]["empty"], f"{op}: NumPy gives {want!r}"
    assert eng.sum(np.array([-0.0, -0.0], np.float32), deterministic=True).tobytes() == np.float32(-0.0).tobytes()


def test_errors(eng):
    assert issubclass(tandem.Error, RuntimeError)
    with pytest.raises(tandem.Error, match="axis"):
        eng.sum(np.zeros((2, 2, 2), np.float32), axis=3)
    with pytest.raises(tandem.Error, match="kernel"):
        eng.sum(np.zeros(3, np.float32), kernel="no_such_kernel")
    with pytest.raises(tandem.Error, match=r"\(2, 3\)"):  # the shapes given
        eng.matmul(np.zeros((2, 3), np.float32), np.zeros((2, 3), np.float32))
    with pytest.raises(tandem.Error, match="beta"):
        eng.matmul(np.zeros((2, 2), np.float32), np.zeros((2, 2), np.float32), beta=1.0)
    with pytest.raises(tandem.Error, match="backend"):
        tandem.Engine("gpu")


def canonical_sum(x):
    """Deterministic mode's order (common/canonical.hpp), written independently: chunks of
    4096 elements; in a chunk, lane i % 32 adds element i in order from -0.0; the lanes meet in a
    halving tree; the chunk values are summed the same way until one is left. NaN: the quiet NaN."""
    t = np.float64 if x.dtype == np.float64 else np.float32
    values = x.astype(t)
    while True:
        chunks = []
        for c in range(0, max(len(values), 1), 4096):
            part = values[c:c + 4096]
            lane = np.full(32, -0.0, dtype=t)
            rows = len(part) // 32
            for r in range(rows):
                lane = lane + part[r * 32:(r + 1) * 32]
            tail = part[rows * 32:]
            lane[:len(tail)] = lane[:len(tail)] + tail
            s = 16
            while s > 0:
                lane[:s] = lane[:s] + lane[s:2 * s]
                s //= 2
            chunks.append(lane[0])
        if len(values) <= 4096:
            return chunks[0]
        values = np.array(chunks, dtype=t)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("n", [1, 33, 4096, 4097, 70001])
def test_deterministic_sums_bit_for_bit(eng, dtype, n):
    x = values(n, dtype, seed=n + 5)
    want = canonical_sum(x)
    if dtype == np.float16:  # computed in float32, rounded once to the element type
        want = want.astype(np.float16)
    assert eng.sum(x, deterministic=True).tobytes() == want.tobytes()
    cpu = tandem.Engine("cpu")
    assert cpu.sum(x, deterministic=True).tobytes() == eng.sum(x, deterministic=True).tobytes()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matmul_forms(eng, dtype):
    rng = np.random.default_rng(3)
    m, k, n = 37, 19, 23
    a = rng.uniform(-1, 1, (m, k)).astype(dtype)
    b = rng.uniform(-1, 1, (k, n)).astype(dtype)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(eng.matmul(a, b), a.astype(np.float64) @ b, rtol=tol, atol=tol)
    np.testing.assert_allclose(eng.matmul(a.T.copy(), b, trans_a=True), a.astype(np.float64) @ b, rtol=tol, atol=tol)
    np.testing.assert_allclose(eng.matmul(a, b.T.copy(), trans_b=True), a.astype(np.float64) @ b, rtol=tol, atol=tol)
    f = np.asfortranarray(a)  # stored by columns: read in place as the transpose
    np.testing.assert_allclose(eng.matmul(f, b), a.astype(np.float64) @ b, rtol=tol, atol=tol)
    c = rng.uniform(-1, 1, (m, n)).astype(dtype)
    want = 2.0 * (a.astype(np.float64) @ b) - 0.5 * c
    out = c.copy()
    assert eng.matmul(a, b, out=out, alpha=2.0, beta=-0.5) is out
    np.testing.assert_allclose(out, want, rtol=10 * tol, atol=10 * tol)
    batch = rng.uniform(-1, 1, (5, m, k)).astype(dtype)
    np.testing.assert_allclose(eng.matmul(batch, b), np.einsum("bik,kj->bij", batch.astype(np.float64), b),
                               rtol=tol, atol=tol)


def test_matmul_16_bit_gives_float32(eng):
    a = values((17, 9), np.float16)
    b = values((9, 5), np.float16)
    c = eng.matmul(a, b)
    assert c.dtype == np.float32
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-5, atol=1e-5)


def test_engine_info(eng):
    assert eng.reduce_kernels()[0] == "auto" and eng.matmul_kernels()[0] == "auto"
    info = eng.kernel_info()
    assert [k["name"] for k in info["reduce"]] == eng.reduce_kernels()
    assert eng.device_info()["name"]
    assert "auto picks" in tandem.info()


def test_several_devices():
    """devices= on the CPU backend gives stand-in devices: the multi-device path without GPUs. Results
    agree with one engine (deterministic sums, min/max and arg* bit for bit)."""
    one = tandem.Engine("cpu")
    group = tandem.Engine("cpu", devices=[0, 1, 2])
    assert [d["index"] for d in group.devices()] == [0, 1, 2] and len(one.devices()) == 1
    x = values(3 * 4096 + 17, np.float32, seed=9)
    for op in OPS:  # values and indices: exactly one engine's
        if kind(op) in ("value", "index"):
            assert getattr(group, op)(x) == getattr(one, op)(x), op
    assert group.sum(x, deterministic=True).tobytes() == one.sum(x, deterministic=True).tobytes()
    check("sum", group.sum(x), numpy_result("sum", x), x)
    a = values((301, 47), np.float64, seed=10)
    for axis in (0, 1):  # (axis 0: per-column sums, the rows split over the devices)
        check("sum", group.sum(a, axis=axis), numpy_result("sum", a, axis), a, axis)
        for op in ("min", "argmax"):
            assert np.array_equal(getattr(group, op)(a, axis=axis), getattr(one, op)(a, axis=axis)), (op, axis)
    tall = values((3 * 4096 + 5, 3), np.float32, seed=12)  # deterministic per-column sums over 4096-row chunks
    assert group.sum(tall, axis=0, deterministic=True).tobytes() == one.sum(tall, axis=0, deterministic=True).tobytes()
    b = values((47, 29), np.float64, seed=11)
    np.testing.assert_allclose(group.matmul(a, b), a @ b, rtol=1e-12, atol=1e-12)
    with pytest.raises(tandem.Error, match="both set"):
        tandem.Engine("cpu", device=1, devices=[0, 1])


def run_python(code, **env):
    import os
    import subprocess
    import sys
    e = dict(os.environ, **env)
    return subprocess.run([sys.executable, "-c", "import tandem\n" + code], env=e, capture_output=True, text=True)


def test_environment():
    r = run_python("print(tandem.Engine().backend)", TANDEM_BACKEND="cpu")
    assert r.returncode == 0 and r.stdout.strip() == "cpu", r.stderr
    r = run_python("tandem.Engine()", TANDEM_BACKEND="gpu")
    assert r.returncode != 0 and "tandem.ValueError" in r.stderr and "backend" in r.stderr


def test_bfloat16_through_ml_dtypes(eng):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    bf16 = np.dtype(ml_dtypes.bfloat16)
    x = values(4097, np.float32, seed=12).astype(bf16)
    ref = x.astype(np.float32)
    check("sum", eng.sum(x), numpy_result("sum", ref), ref)
    assert eng.argmax(x) == ref.argmax() and eng.max(x) == ref.max()
    a, b = values((17, 9), np.float32).astype(bf16), values((9, 5), np.float32).astype(bf16)
    c = eng.matmul(a, b)
    assert c.dtype == np.float32
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-5, atol=1e-5)


def test_stub_lists_the_tables():
    """python/tandem.pyi, the stub editors read, names every op method and the module's tables."""
    import pathlib
    stub = (pathlib.Path(__file__).parents[2] / "python" / "tandem.pyi").read_text()
    for op in tandem.ops:
        assert f"    def {op}(self, x: Any, axis" in stub, f"python/tandem.pyi lacks Engine.{op}"
    for name in ("ops:", "dtypes:", "def info(", "def matmul("):
        assert name in stub
