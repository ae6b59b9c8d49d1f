"""NumPy's initial= on the reductions that take it (tandem.op_info[op]["initial"]: the sums, the product,
min and max), every element type, axis form, keepdims and out=, empty inputs included, against NumPy's
own np.sum / np.prod / np.min / np.max with initial=. The data are small integers, so that every sum and
product is exact in every type and the results must equal NumPy's value for value, in NumPy's type. On
CuPy arrays and PyTorch tensors where a GPU is usable (the initial value is combined by their library)."""
import numpy as np
import pytest

import tandem
from numpy_conventions import DEVICE_LIBRARY_PARAMS, DTYPE_PARAMS, NUMPY_OPS, ops_where

INITIAL_OPS = ops_where(initial=True)
AXES = [None, 0, 1, (0, 1), -1]
SHAPES = [(3, 4), (0, 4), (3, 0), (1, 1)]


def initial_values(dtype):
    """Values of every kind NumPy converts into the result type (a float into an integer type is truncated,
    a negative one into an unsigned type wraps)."""
    if dtype == np.bool_:
        return [True, 0, 3]
    if dtype.kind in "iu":
        return [7, -1, 2.5, np.int16(-3)]
    return [0.5, -2.0, np.float32(1.5), 3, np.nan, -np.inf]


def data(dtype, shape):
    x = np.random.default_rng(7).integers(-2, 3, shape)
    if dtype == np.bool_ or dtype.kind == "u":
        x = np.abs(x) % 2 if dtype == np.bool_ else np.abs(x)
    return x.astype(dtype)


def same(got, want, what):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, f"{what}: {got.dtype} where NumPy gives {want.dtype}"
    assert got.shape == want.shape, f"{what}: shape {got.shape} where NumPy gives {want.shape}"
    np.testing.assert_array_equal(got.astype(np.float64) if got.dtype.kind == "V" else got,
                                  want.astype(np.float64) if want.dtype.kind == "V" else want, err_msg=what)


@pytest.mark.parametrize("dtype", DTYPE_PARAMS)
@pytest.mark.parametrize("op", INITIAL_OPS)
@np.errstate(all="ignore")  # (0 * -inf: NaN, with NumPy's RuntimeWarning, as NumPy's own prod gives)
@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # (NumPy 1: a Python int -1 into an unsigned type)
def test_initial_as_numpy(eng, op, dtype):
    failures = []
    for shape in SHAPES:
        x = data(dtype, shape)
        for axis in AXES:
            for keepdims in (False, True):
                for v in initial_values(dtype):
                    what = f"{op}({dtype}, shape {shape}, axis={axis}, keepdims={keepdims}, initial={v!r})"
                    try:
                        want = NUMPY_OPS[op](x, axis=axis, keepdims=keepdims, initial=v)
                    except Exception as e:  # (NumPy 2: a Python int out of the result type's range)
                        try:
                            getattr(eng, op)(x, axis=axis, keepdims=keepdims, initial=v)
                            failures.append(f"{what}: NumPy raises {type(e).__name__}, tandem does not")
                        except type(e):
                            pass
                        continue
                    try:
                        same(getattr(eng, op)(x, axis=axis, keepdims=keepdims, initial=v), want, what)
                        out = np.empty(np.shape(want), np.asarray(want).dtype)
                        if out.ndim:  # out= gets the same values, and is what comes back
                            assert getattr(eng, op)(x, axis=axis, keepdims=keepdims, initial=v, out=out) is out, what
                            same(out, want, what + " into out=")
                    except AssertionError as e:
                        failures.append(str(e).splitlines()[0])
    assert not failures, f"{len(failures)} cases differ from NumPy, e.g.\n" + "\n".join(failures[:10])


def test_initial_is_one_more_operation(eng):
    """Where NumPy's order of adds would round differently, tandem's result is its own reduction's result
    combined with initial= by one more operation of the result's type (so deterministic mode's bits stay
    the same on every backend)."""
    x = np.random.default_rng(3).uniform(-1, 1, 1001).astype(np.float32)
    for deterministic in (False, True):
        s = eng.sum(x, deterministic=deterministic)
        assert eng.sum(x, initial=0.1, deterministic=deterministic) == np.float32(s) + np.float32(0.1)
        rows = eng.sum(x[:1000].reshape(10, 100), axis=1, deterministic=deterministic)
        got = eng.sum(x[:1000].reshape(10, 100), axis=1, initial=0.1, deterministic=deterministic)
        np.testing.assert_array_equal(got, rows + np.float32(0.1))


def test_signed_zero_initial(eng):
    """initial= is the first element of NumPy's sum: with nothing kept by where= (or no elements) a sum is
    initial itself, -0.0 included; with elements kept, initial + their sum, as NumPy's."""
    for dt in (np.float32, np.float64, np.float16):
        x = np.array([[1.5, -0.0, 2.0], [-0.0, -0.0, 4.0]], dt)
        for where in (np.zeros_like(x, bool), np.array([[False, True, False], [True, True, False]])):
            for initial in (-0.0, 0.0, 1.0):
                for axis in (None, 0, 1):
                    want = np.sum(x, axis=axis, where=where, initial=initial)
                    same(eng.sum(x, axis=axis, where=where, initial=initial), want, "sum")
                    assert np.array_equal(np.signbit(eng.sum(x, axis=axis, where=where, initial=initial)),
                                          np.signbit(want)), (dt, where, initial, axis)


def test_empty_min_and_max_take_initial(eng):
    """min / max of no elements raise without initial= (NumPy's ValueError) and give it with one."""
    for op in ("min", "max"):
        with pytest.raises(tandem.ValueError):
            getattr(eng, op)(np.zeros((2, 0)), axis=1)
        same(getattr(eng, op)(np.zeros((2, 0), np.float32), axis=1, initial=-1), np.full(2, -1, np.float32), op)
        same(getattr(eng, op)(np.zeros(0, np.int8), initial=-5.5), np.int8(-5), op)  # (NumPy's cast: truncated)


@pytest.mark.parametrize("name", DEVICE_LIBRARY_PARAMS)
def test_initial_on_device_arrays(name):
    lib = __import__(name)
    eng = tandem.Engine("cuda")
    x = data(np.dtype(np.float32), (3, 4))
    d = lib.asarray(x) if name == "cupy" else lib.from_numpy(x).cuda()
    host = (lambda y: lib.asnumpy(y)) if name == "cupy" else (lambda y: y.cpu().numpy())
    for op in INITIAL_OPS:
        for axis in (None, 0, 1):
            for v in (0.5, -3, np.nan):
                want = NUMPY_OPS[op](x, axis=axis, initial=v)
                got = getattr(eng, op)(d, axis=axis, initial=v)
                assert type(got).__module__.split(".")[0] == name
                same(host(got), want, f"{name} {op}(axis={axis}, initial={v!r})")
        same(host(getattr(eng, op)(d[:, :0], axis=1, initial=2)), NUMPY_OPS[op](x[:, :0], axis=1, initial=2), op)
