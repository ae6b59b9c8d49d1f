"""NumPy's where= on the reductions that take it (every op but argmin / argmax, and var / std): masks of the
input's shape and broadcast ones (a row, a column, a scalar), all True and all False, every element type,
axis form, keepdims and out=, against NumPy's own where= on the same values in float64 (exact for the
integer results: the data are small integers). Also min / max without initial= (NumPy's ValueError), a mask
that does not broadcast, NaN left out by a mask, deterministic bits at every address and on every usable
backend, and CuPy arrays / PyTorch tensors where a GPU is usable."""
import numpy as np
import pytest

import tandem
from numpy_conventions import (BACKENDS, DEVICE_LIBRARY_PARAMS, DTYPE_PARAMS, axis_forms, is_float, normalize,
                               result_shape)

WHERE_OPS = [op for op in tandem.ops if tandem.op_info[op]["result"] != "index"] + ["var", "std"]
NUMPY = {"sum": np.sum, "prod": np.prod, "min": np.min, "max": np.max, "mean": np.mean, "var": np.var, "std": np.std,
         "sumsq": lambda x, **kw: np.sum(np.square(x), **kw)}


def data(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    lo = 0 if dtype.kind == "u" else -3
    return rng.integers(lo, 4, shape).astype(dtype)


def masks(shape, seed=1):
    rng = np.random.default_rng(seed)
    yield "random", rng.random(shape) < 0.6
    yield "all", np.ones(shape, bool)
    yield "none", np.zeros(shape, bool)
    yield "False", False
    if len(shape) == 2:
        yield "row", rng.random(shape[1]) < 0.5
        yield "column", rng.random((shape[0], 1)) < 0.5


def result_dtype(op, dt):
    if op in ("sum", "sumsq", "prod") and dt.kind in "biu":
        return np.dtype(np.uint64 if dt.kind == "u" else np.int64)
    if op in ("mean", "var", "std") and not is_float(dt):
        return np.dtype(np.float64)
    return dt


def extra(op, dt=np.dtype(np.float32)):
    """NumPy's min / max take where= only with initial= (one inside the data's range: 5, and -2 or 0)."""
    if op not in ("min", "max"):
        return {}
    return {"initial": 5 if op == "min" else (0 if dt.kind in "bu" else -2)}


def check(eng, op, x, axis, mask, keepdims, use_out, what):
    kw = dict(axis=axis, keepdims=keepdims, where=mask, **extra(op, x.dtype))
    rdt = result_dtype(op, x.dtype)
    with np.errstate(all="ignore"), _quiet():
        want = np.asarray(NUMPY[op](x.astype(np.float64), **kw))
    shape = result_shape(x.shape, normalize(axis, x.ndim), keepdims)
    with np.errstate(all="ignore"), _quiet():
        if use_out:
            out = np.zeros(shape, rdt)
            got = getattr(eng, op)(x, out=out, **kw)
            assert got is out, what
        else:
            got = getattr(eng, op)(x, **kw)
    got = np.asarray(got)
    assert got.dtype == rdt, f"{what}: {got.dtype}, NumPy's type is {rdt}"
    assert got.shape == want.shape == shape, f"{what}: shape {got.shape}, NumPy's {want.shape}"
    exact = op in ("sum", "sumsq", "prod", "min", "max") and (rdt.kind in "biu" or op in ("min", "max"))
    if exact:
        np.testing.assert_array_equal(got.astype(np.float64), want.astype(rdt).astype(np.float64), err_msg=what)
    else:
        rtol = {2: 1e-2, 4: 1e-5, 8: 1e-12}[rdt.itemsize]
        np.testing.assert_allclose(got.astype(np.float64), want, rtol=rtol, atol=rtol, equal_nan=True, err_msg=what)


class _quiet:
    """Warnings of empty slices (NumPy's own warn too) are not what these tests check."""

    def __enter__(self):
        import warnings
        self.w = warnings.catch_warnings()
        self.w.__enter__()
        warnings.simplefilter("ignore", RuntimeWarning)

    def __exit__(self, *a):
        self.w.__exit__(*a)


@pytest.mark.parametrize("dtype", DTYPE_PARAMS)
@pytest.mark.parametrize("op", WHERE_OPS)
def test_where_as_numpy(eng, op, dtype):
    for shape in [(7,), (3, 4), (2, 3, 5)]:
        x = data(dtype, shape, seed=len(shape))
        for name, mask in masks(shape):
            for axis in axis_forms(x.ndim):
                for keepdims in (False, True):
                    what = f"{op}({x.dtype}, shape {shape}, axis={axis}, where={name}, keepdims={keepdims})"
                    check(eng, op, x, axis, mask, keepdims, False, what)
                if name == "random":
                    check(eng, op, x, axis, mask, False, bool(result_shape(shape, normalize(axis, x.ndim), False)),
                          f"{op}({x.dtype}, shape {shape}, axis={axis}) into out=")


def test_where_leaves_out_nan(eng):
    x = np.random.default_rng(4).standard_normal((6, 50))
    x[:, ::7] = np.nan
    keep = ~np.isnan(x)
    for op in ("sum", "mean", "var", "std"):
        np.testing.assert_allclose(getattr(eng, op)(x, axis=1, where=keep), NUMPY[op](x, axis=1, where=keep),
                                   rtol=1e-12)


def test_where_mean_of_empty_slice_warns(eng):
    x = np.arange(6.0).reshape(2, 3)
    keep = np.array([[True, True, False], [False, False, False]])
    for where, axis in ((keep, 1), (np.zeros_like(keep), None)):
        with pytest.warns(RuntimeWarning, match="Mean of empty slice"):
            got = eng.mean(x, axis=axis, where=where)
        with pytest.warns(RuntimeWarning, match="Mean of empty slice"):
            want = np.mean(x, axis=axis, where=where)
        np.testing.assert_array_equal(got, want)


def test_where_errors(eng):
    x = np.ones((3, 4), np.float32)
    for op in ("min", "max"):
        with pytest.raises(tandem.ValueError, match="initial="):
            getattr(eng, op)(x, where=x > 0)
    with pytest.raises(tandem.ValueError, match="broadcast"):
        eng.sum(x, where=np.ones((2, 4), bool))
    with pytest.raises(tandem.TypeError, match="where"):
        eng.argmax(x, axis=1, where=True)
    for bad in (np.array([1, 0, 2, 0]), np.array([0.5, 0, 1, 0]), None, [1, 0, 0, 1]):  # (NumPy: casting 'safe')
        for op in ("sum", "mean", "var"):
            with pytest.raises(tandem.TypeError, match="booleans"):
                getattr(eng, op)(x, axis=1, where=bad)
    m = np.array([True, False, True, True])
    for out in (np.zeros(3, np.int64), np.zeros(3, bool)):  # (a float result into integers: 'same_kind')
        with pytest.raises(tandem.TypeError, match="out="):
            eng.mean(x, axis=1, where=m, out=out)
    with pytest.raises(tandem.ValueError, match=r"\(3,\)"):
        eng.mean(x, axis=1, where=m, out=np.zeros((3, 1), np.float32))
    np.testing.assert_array_equal(eng.sum(x, axis=1, where=[True, True, True, True]), np.sum(x, axis=1))


@pytest.mark.parametrize("op", ["sum", "mean", "var"])
def test_where_deterministic_bits(op):
    """deterministic=True with where=: the same bits wherever the data lies and on every usable backend."""
    rng = np.random.default_rng(8)
    x = rng.standard_normal((20, 999)).astype(np.float32)
    mask = rng.random(x.shape) < 0.7
    results = []
    for backend in BACKENDS:
        eng = tandem.Engine(backend)
        for offset in (0, 1, 3, 7):
            buf = np.zeros(x.size + 8, np.float32)
            buf[offset:offset + x.size] = x.ravel()
            xv = buf[offset:offset + x.size].reshape(x.shape)
            results.append((backend, offset, getattr(eng, op)(xv, axis=1, where=mask, deterministic=True),
                            getattr(eng, op)(xv, where=mask, deterministic=True)))
    for r in results[1:]:
        for i in (2, 3):
            assert np.asarray(r[i]).tobytes() == np.asarray(results[0][i]).tobytes(), f"{op}: {r[0]} offset {r[1]}"


@pytest.mark.parametrize("name", DEVICE_LIBRARY_PARAMS)
def test_where_on_device_arrays(name):
    """CuPy arrays and PyTorch tensors with masks of their library or NumPy's: results of their library, the
    same bits as the CPU's in deterministic mode."""
    lib = __import__(name)
    eng, cpu = tandem.Engine("cuda"), tandem.Engine("cpu")
    rng = np.random.default_rng(9)
    x = rng.standard_normal((37, 300)).astype(np.float32)
    mask = rng.random(x.shape) < 0.6
    dev = (lambda a: lib.asarray(a)) if name == "cupy" else (lambda a: lib.from_numpy(a).cuda())
    host = (lambda y: lib.asnumpy(y)) if name == "cupy" else (lambda y: y.cpu().numpy())
    for op in ("sum", "sumsq", "min", "mean", "var", "std"):
        for axis in (None, 0, 1):
            for m in (mask, dev(mask)):
                got = getattr(eng, op)(dev(x), axis=axis, where=m, deterministic=True, **extra(op))
                assert type(got).__module__.split(".")[0] == name
                want = getattr(cpu, op)(x, axis=axis, where=mask, deterministic=True, **extra(op))
                assert host(got).tobytes() == np.asarray(want).tobytes(), f"{name} {op}(axis={axis})"
