"""var and std with NumPy's conventions (ddof=, the Array API's correction=, axis forms, keepdims, out=,
result types, empty inputs), every element type and layout, against an independent reference: the
two-pass variance of the values in long double. Also what a one-pass formula gets wrong (a large mean with
a small spread), deterministic mode's bits (the same at every address, and on every usable backend), the
errors, and CuPy arrays / PyTorch tensors where a GPU is usable."""
import warnings

import numpy as np
import pytest

import tandem
from numpy_conventions import (BACKENDS, DEVICE_LIBRARY_PARAMS, DTYPE_PARAMS, axis_forms, float_info, is_bf16, is_float,
                               layouts, normalize, result_shape, values, wide)

SHAPES = [(1,), (7,), (1000,), (3, 4), (5, 33), (2, 3, 5), (1, 1)]


def result_dtype(dt, want=None):
    """NumPy's: the element type for floats, float64 for integers and bool; dtype= chooses."""
    if want is not None:
        return np.dtype(want)
    return np.dtype(dt) if is_float(np.dtype(dt)) else np.dtype(np.float64)


def reference(x, axes, ddof, root):
    """The two-pass variance (std) in long double, the reduced axes kept."""
    w = wide(x)
    n = int(np.prod([x.shape[a] for a in axes])) if axes else 1
    mean = w.sum(axis=axes, keepdims=True) / n
    v = np.square(w - mean).sum(axis=axes, keepdims=True) / max(n - ddof, 0)
    return np.sqrt(v) if root else v


def tolerance(rdt, n):
    """The error bound of the two passes in the working type (float32 for 16-bit results) plus the final
    rounding to the result type: a few units of the working type per level of the sums, relative."""
    work_eps = float_info(np.dtype(np.float32))[0] if rdt.itemsize <= 4 else float_info(np.dtype(np.float64))[0]
    return 8 * work_eps * (1 + np.log2(max(n, 2))) + float_info(rdt)[0]


def check(eng, op, x, axis, ddof, keepdims, use_out, want=None):
    what = f"{op}({x.dtype}, shape {x.shape}, axis={axis}, ddof={ddof}, keepdims={keepdims}, out={use_out})"
    axes = normalize(axis, x.ndim)
    rdt = result_dtype(x.dtype, want)
    shape = result_shape(x.shape, axes, keepdims)
    kw = dict(axis=axis, ddof=ddof, keepdims=keepdims)
    if want is not None:
        kw["dtype"] = want
    if use_out:
        out = np.full(shape, np.nan, rdt)
        got = getattr(eng, op)(x, out=out, **kw)
        assert got is out, what + ": out= is not what came back"
    else:
        got = getattr(eng, op)(x, **kw)
        if not keepdims and not shape:  # a full reduction: a NumPy scalar, as NumPy's
            assert isinstance(got, np.generic), f"{what}: {type(got).__name__}, not a NumPy scalar"
    got = np.asarray(got)
    assert got.dtype == rdt, f"{what}: {got.dtype} where NumPy gives {rdt}"
    assert got.shape == shape, f"{what}: shape {got.shape} where NumPy gives {shape}"
    ref = reference(x, axes, ddof, op == "std").reshape(shape)
    n = int(np.prod([x.shape[a] for a in axes])) if axes else 1
    err = np.abs(wide(got) - ref)
    # (plus what the mean's own rounding adds where the spread is 0 or tiny: delta^2 for var, delta for std)
    delta = tolerance(rdt, n) * float(np.abs(wide(x)).max(initial=0))
    bound = tolerance(rdt, n) * np.abs(ref) + (delta if op == "std" else 2 * delta * delta) + float_info(rdt)[1]
    assert np.all(err <= bound), f"{what}: off by {float(err.max()):.3g} (bound {float(bound.max()):.3g})"


@pytest.mark.parametrize("dtype", DTYPE_PARAMS)
@pytest.mark.parametrize("op", ["var", "std"])
def test_var_std_as_numpy(eng, op, dtype):
    """Every axis form, ddof, keepdims and out= on every shape and layout, against the reference."""
    for shape in SHAPES:
        base = values(shape, dtype, seed=len(shape))
        for name, x in layouts(base):
            for axis in axis_forms(x.ndim):
                axes = normalize(axis, x.ndim)
                n = int(np.prod([x.shape[a] for a in axes])) if axes else 1
                for ddof in (0, 1):
                    if n - ddof <= 0:
                        continue  # (warns: test_degrees_of_freedom)
                    for keepdims in (False, True):
                        check(eng, op, x, axis, ddof, keepdims, use_out=False)
                    if name == "C":
                        check(eng, op, x, axis, ddof, False, use_out=True)


@pytest.mark.parametrize("want", [np.float32, np.float64])
def test_dtype_chooses_the_working_type(eng, want):
    for dt in (np.int16, np.float32, np.float64):
        x = values((6, 10), np.dtype(dt), seed=5)
        for axis in (None, 1):
            check(eng, "var", x, axis, 1, False, use_out=False, want=want)


def test_correction_is_ddof(eng):
    x = values((4, 9), np.dtype(np.float64), seed=2)
    for c in (0, 1, 2.5):
        np.testing.assert_array_equal(eng.var(x, axis=1, correction=c), eng.var(x, axis=1, ddof=c))
    with pytest.raises(tandem.ValueError, match="simultaneously"):
        eng.var(x, ddof=1, correction=1)
    np.testing.assert_array_equal(eng.var(x, axis=1, ddof=0, correction=1), eng.var(x, axis=1, ddof=1))  # (NumPy 2)


def test_a_large_mean_with_a_small_spread(eng):
    """sumsq / n - mean^2 in float32 loses every digit here (the squares are 1e8, the variance 1/12);
    the two passes keep it."""
    rng = np.random.default_rng(11)
    x = (10000 + rng.uniform(0, 1, 100000)).astype(np.float32)
    ref = float(reference(x, (0,), 0, False).ravel()[0])
    assert abs(float(eng.var(x)) - ref) <= 1e-3 * ref
    rows = x.reshape(100, 1000)
    np.testing.assert_allclose(eng.std(rows, axis=1), np.sqrt(reference(rows, (1,), 0, False).ravel()), rtol=1e-3)


@pytest.mark.parametrize("dtype", [d for d in DTYPE_PARAMS if d.values[0] is not None and is_float(d.values[0])
                                   and d.values[0] != np.float64])
def test_constant_input_has_variance_zero(eng, dtype):
    """The mean is taken in float64 (exact for float32 and 16-bit elements), so a constant input's deviations,
    and its variance, are 0 exactly, as NumPy's are for these."""
    for n in (2, 3, 7, 16, 1000):
        for v in (0.1, -3.3e-5, 4.0221432e16, 1e30):
            with np.errstate(over="ignore"):
                x = np.full((2, n), v, np.float64).astype(dtype)
            if not np.isfinite(x.astype(np.float32)).all():
                continue  # (beyond float16's range)
            for deterministic in (False, True):
                assert eng.var(x, deterministic=deterministic) == 0, (dtype, n, v)
                assert (eng.std(x, axis=1, ddof=1, deterministic=deterministic) == 0).all(), (dtype, n, v)


def test_degrees_of_freedom(eng):
    """n - ddof <= 0 and empty inputs: NumPy's RuntimeWarning, then inf or NaN as its division gives."""
    x = np.array([1.0, 2.0, 4.0])
    for op in ("var", "std"):
        with pytest.warns(RuntimeWarning, match="Degrees of freedom"), np.errstate(all="ignore"):
            got = getattr(eng, op)(x, ddof=3)
        assert np.isinf(got) and got > 0
        with pytest.warns(RuntimeWarning, match="Degrees of freedom"), np.errstate(all="ignore"):
            assert np.isnan(getattr(eng, op)(np.array([], np.float32)))
        with pytest.warns(RuntimeWarning), np.errstate(all="ignore"):
            got = getattr(eng, op)(np.zeros((3, 0), np.int32), axis=1)
        assert got.dtype == np.float64 and got.shape == (3,) and np.isnan(got).all()
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # (nothing to warn about)
            assert getattr(eng, op)(np.zeros((0, 3), np.float32), axis=1).shape == (0,)


@pytest.mark.parametrize("op", ["var", "std"])
def test_deterministic_bits_at_every_address(op):
    """deterministic=True: the same bits wherever the data lies and on every usable backend."""
    x = values((5000,), np.dtype(np.float32), seed=3) * np.float32(3) + np.float32(7)
    m = values((40, 333), np.dtype(np.float32), seed=4)
    results = []
    for backend in BACKENDS:
        eng = tandem.Engine(backend)
        for offset in range(0, 16):
            buf = np.zeros(x.size + 16, np.float32)
            buf[offset:offset + x.size] = x
            xv = buf[offset:offset + x.size]
            mb = np.zeros(m.size + 16, np.float32)
            mb[offset:offset + m.size] = m.ravel()
            mv = mb[offset:offset + m.size].reshape(m.shape)
            results.append((backend, offset, getattr(eng, op)(xv, ddof=1, deterministic=True),
                            getattr(eng, op)(mv, axis=1, deterministic=True),
                            getattr(eng, op)(mv, axis=0, deterministic=True)))
    first = results[0]
    for r in results[1:]:
        for i in (2, 3, 4):
            assert np.asarray(r[i]).tobytes() == np.asarray(first[i]).tobytes(), \
                f"{op}: {r[0]} at offset {r[1]} differs from {first[0]} at offset {first[1]}"


def test_errors_in_python_terms(eng):
    x = np.ones((2, 3))
    with pytest.raises(tandem.TypeError, match="float32, float64"):
        eng.var(x, dtype=np.int32)
    with pytest.raises(tandem.TypeError, match="ddof"):
        eng.std(x, ddof="1")
    with pytest.raises(tandem.TypeError, match="unexpected keyword argument 'mean'"):
        eng.var(x, mean=np.zeros(3))  # (NumPy 2's precomputed mean= is not taken)
    with pytest.raises(tandem.ValueError, match="out="):
        eng.var(x, axis=0, out=np.empty(2))
    with pytest.raises(tandem.TypeError, match="out="):
        eng.var(x, axis=0, out=np.empty(3, np.int64))
    with pytest.raises(tandem.AxisError):
        eng.var(x, axis=2)


@pytest.mark.parametrize("name", DEVICE_LIBRARY_PARAMS)
def test_var_std_on_device_arrays(name):
    """CuPy arrays and PyTorch tensors: results of their library, the same bits as the CPU's in
    deterministic mode."""
    lib = __import__(name)
    eng, cpu = tandem.Engine("cuda"), tandem.Engine("cpu")
    x = values((37, 300), np.dtype(np.float32), seed=9)
    d = lib.asarray(x) if name == "cupy" else lib.from_numpy(x).cuda()
    host = (lambda y: lib.asnumpy(y)) if name == "cupy" else (lambda y: y.cpu().numpy())
    for op in ("var", "std"):
        for axis in (None, 0, 1, (0, 1)):
            got = getattr(eng, op)(d, axis=axis, ddof=1, deterministic=True)
            assert type(got).__module__.split(".")[0] == name
            want = getattr(cpu, op)(x, axis=axis, ddof=1, deterministic=True)
            assert host(got).tobytes() == np.asarray(want).tobytes(), f"{name} {op}(axis={axis})"
        check(eng, op, x, 1, 0, True, use_out=False)
