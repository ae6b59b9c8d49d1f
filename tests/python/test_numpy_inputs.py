"""Arrays a NumPy user has that are not plain arrays, and NumPy's rules at the edges, each against NumPy itself:
masked arrays and numpy.matrix (refused, never reduced as if plain), objects whose __array__ raises (the
error is chained), 0-d inputs with axis=0 / -1 and keepdims (NumPy's scalars), the casting rule of an
index out= (integer types only), and out= written in place."""
import numpy as np
import pytest

import tandem
from numpy_conventions import NUMPY_OPS


@pytest.fixture
def eng():
    return tandem.Engine("cpu")


def test_masked_array_is_refused_not_summed_with_its_mask_ignored(eng):
    m = np.ma.masked_array([1.0, 2.0, 100.0], mask=[0, 0, 1])
    for op in tandem.ops:
        with pytest.raises(tandem.TypeError, match="masked"):
            getattr(eng, op)(m)
    assert eng.sum(m.compressed()) == np.sum(m) == 3.0  # the ways the message points to
    assert eng.sum(m.data, where=~np.ma.getmaskarray(m)) == 3.0
    assert eng.mean(m.data, where=~np.ma.getmaskarray(m)) == np.mean(m) == 1.5


def test_matrix_is_refused(eng):
    with pytest.raises(tandem.TypeError, match="matrix"):
        eng.sum(np.matrix([[1.0, 2.0], [3.0, 4.0]]), axis=0)


def test_memmap_is_an_array(eng, tmp_path):
    mm = np.memmap(tmp_path / "x", dtype=np.float32, mode="w+", shape=(5,))
    mm[:] = np.arange(5)
    assert eng.sum(mm) == np.sum(mm)


def test_array_interface_errors_are_chained(eng):
    class Bad:
        def __array__(self, dtype=None, copy=None):
            raise RuntimeError("the object's own failure")

    with pytest.raises(tandem.TypeError) as e:
        eng.sum(Bad())
    assert isinstance(e.value.__cause__, RuntimeError)
    assert "the object's own failure" in str(e.value.__cause__)


@pytest.mark.parametrize("op", tandem.ops)
@pytest.mark.parametrize("axis", [0, -1])
def test_zero_d_input_takes_axis_0_and_minus_1(eng, op, axis):
    # (NumPy's sum, min, max, argmin, argmax take them; its mean refuses them, tandem's takes them alike.)
    a = np.array(3.0)
    want = NUMPY_OPS[op](a, axis=None if tandem.op_info[op]["result"] == "mean" else axis)
    got = getattr(eng, op)(a, axis=axis)
    assert isinstance(got, np.generic) and type(got) is type(want) and got == want


@pytest.mark.parametrize("op", tandem.ops)
def test_zero_d_input_with_keepdims_gives_a_scalar(eng, op):
    a = np.array(3.0)
    want, got = NUMPY_OPS[op](a, keepdims=True), getattr(eng, op)(a, keepdims=True)
    assert isinstance(want, np.generic) and isinstance(got, np.generic) and got == want


@pytest.mark.parametrize("op", ["argmin", "argmax"])
def test_index_out_takes_integers_only(eng, op):
    x = np.random.default_rng(0).random((4, 6))
    for dtype in (np.int32, np.int64):
        out = np.zeros(4, dtype)
        assert getattr(eng, op)(x, axis=1, out=out) is out
        np.testing.assert_array_equal(out, getattr(np, op)(x, axis=1))
    with pytest.raises(TypeError):
        getattr(np, op)(x, axis=1, out=np.zeros(4))  # NumPy refuses a float out=
    with pytest.raises(tandem.TypeError, match="int"):
        getattr(eng, op)(x, axis=1, out=np.zeros(4))


@pytest.mark.parametrize("op", tandem.ops)
def test_out_written_in_place_even_over_the_input(eng, op):
    x = np.arange(24.0).reshape(4, 6)[:, ::-1]
    dtype = np.int64 if tandem.op_info[op]["result"] == "index" else np.float64
    want = NUMPY_OPS[op](x, axis=1)
    out = np.zeros(4, dtype)
    assert getattr(eng, op)(x, axis=1, out=out) is out
    np.testing.assert_allclose(out, want)
    y = np.arange(24.0).reshape(4, 6)
    over = y[:, 0]  # out= over the input's own first column (NumPy allows it)
    want = NUMPY_OPS[op](y, axis=1)
    if dtype is np.float64:
        assert getattr(eng, op)(y, axis=1, out=over) is over
        np.testing.assert_allclose(over, want)


@pytest.mark.parametrize("dtype", [None, np.float64])
def test_int64_mean_does_not_wrap(eng, dtype):
    x = np.full(6, 1_700_000_000_000_000_000, np.int64)  # the sum, 1.02e19, is past int64
    assert eng.mean(x, dtype=dtype) == np.mean(x, dtype=dtype) == 1.7e18
    y = np.full((3, 6), 1_700_000_000_000_000_000, np.int64)
    np.testing.assert_array_equal(eng.mean(y, axis=1), np.full(3, 1.7e18))
    np.testing.assert_array_equal(eng.mean(y, axis=0), np.full(6, 1.7e18))
    assert eng.sum(x) == np.sum(x)  # (the sum itself wraps modulo 2^64, as NumPy's)


def test_bfloat16_without_ml_dtypes_is_a_clear_type_error(eng):
    """A bfloat16 result asked for where ml_dtypes (NumPy's bfloat16) is not installed: tandem.TypeError saying
    what to install, not a bare ModuleNotFoundError."""
    try:
        import ml_dtypes  # noqa: F401
        pytest.skip("ml_dtypes is installed: bfloat16 arrays are available")
    except ImportError:
        pass
    with pytest.raises(TypeError, match="ml_dtypes"):
        eng.sum(np.ones(3, np.float32), dtype="bfloat16")
