"""NumPy's conventions for tandem.Engine's reductions, generated from the tables rather than picked: every
op of tandem.ops x every element type of tandem.dtypes x shapes of 0 to 4 dimensions (zero lengths
included) x every axis form (None, each axis, each negative axis, every tuple of axes) x keepdims x layouts
(C, Fortran, transposed, strided, negative strides, broadcast) x out=None / out=array, each against NumPy:
the result's type, dtype and shape, and its values (exact for min, max, argmin, argmax and integer
results; float sums and means within one rounding of the result type plus the accumulation bound of an
independent reference in long double). Then NaN and infinities, dtype=, out=, and a Hypothesis property
test on random shapes and views. The reference and the checks: numpy_conventions.py; matmul:
test_conventions_matmul.py; kernels, errors and the version: test_conventions_errors.py."""
import itertools
import math
import os
import re
import warnings

import numpy as np
import pytest

import tandem
from numpy_conventions import (ARG_OPS, BACKENDS, DTYPE_OF, DTYPE_OPS, DTYPE_PARAMS, NO_IDENTITY, OPS, PRODUCTS, TERMS,
                               Expected,
                               Failures, axis_forms, check_reduction, float_info, is_bf16, is_float, layouts, ops_where,
                               shape_id, values, wide)

SHAPES = [(), (0,), (1,), (2,), (7,), (31,), (4099,),
          (3, 5), (1, 6), (0, 3), (3, 0), (0, 0), (33, 130),
          (2, 3, 4), (3, 1, 5), (2, 0, 3), (0, 2, 0),
          (2, 3, 4, 5), (2, 1, 3, 2), (1, 2, 0, 3)]


def test_layouts_are_the_values():
    """(The generator's own check: each view holds the values it claims, in the layout it names.)"""
    a = values((3, 4, 5), np.dtype(np.float32))
    seen = dict(layouts(a))
    for name in ("C", "F", "transposed", "strided", "reversed", "reversed_step"):
        np.testing.assert_array_equal(seen[name], a, err_msg=name)
    assert seen["F"].flags.f_contiguous and not seen["F"].flags.c_contiguous
    assert all(s < 0 for s in seen["reversed"].strides) and seen["reversed_step"].strides[0] < 0
    assert not seen["strided"].flags.c_contiguous and seen["transposed"].strides[0] == 4
    assert seen["broadcast_first"].strides[0] == 0 and seen["broadcast_last"].strides[-1] == 0


@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
@pytest.mark.parametrize("dtype", DTYPE_PARAMS)
@pytest.mark.parametrize("op", OPS)
def test_every_combination(eng, op, dtype, shape):
    """op x dtype x shape x layout x axis form x keepdims x out, against NumPy."""
    base = values(shape, dtype, seed=len(shape) * 1000 + sum(shape))
    failures = Failures()
    for layout, x in layouts(base):
        for axis in axis_forms(x.ndim, tuples=op not in ARG_OPS):
            expected = None
            with failures.case(f"{op}(<{layout} {dtype} {shape}>, axis={axis!r})"):
                expected = Expected(op, x, axis)
            if expected is None:
                continue
            for keepdims in (False, True):
                for use_out in (False, True):
                    with failures.case(f"{op}(<{layout} {dtype} {shape}>, axis={axis!r}, keepdims={keepdims}, "
                                       f"out={'array' if use_out else None})"):
                        check_reduction(eng, op, x, axis, keepdims, use_out, expected=expected)
    failures.check()


@pytest.mark.parametrize("dtype", DTYPE_PARAMS)
@pytest.mark.parametrize("op", OPS)
def test_nan_and_infinity(eng, op, dtype):
    """NaN propagates (argmin / argmax: the first NaN, NumPy's rule); infinities as NumPy's."""
    if not is_float(dtype):
        pytest.skip("integers have no NaN")
    failures = Failures()
    for shape in [(9,), (4, 7), (3, 4, 5)]:
        x = values(shape, dtype, seed=3)
        flat = x.reshape(-1)
        flat[[2, 5]] = np.inf
        flat[[1, 7]] = -np.inf
        if len(shape) > 1:
            flat[[6, 11, 17]] = np.nan
        for layout, v in itertools.islice(layouts(x), 3):
            for axis in axis_forms(v.ndim, tuples=op not in ARG_OPS):
                with failures.case(f"{op}(<{layout} {dtype} {shape} with NaN / inf>, axis={axis!r})"):
                    check_reduction(eng, op, v, axis, False, False)
    failures.check()
    v = np.array([1, np.nan, 2, np.nan], dtype)
    if op in ARG_OPS:
        assert getattr(eng, op)(v) == 1
    else:
        assert np.isnan(getattr(eng, op)(v))


@pytest.mark.parametrize("dtype", [d for d in DTYPE_PARAMS if d.values[0] is None or is_float(d.values[0])])
def test_sums_round_once(eng, dtype):
    """16-bit (and float32) sums are computed in float32 or wider and rounded once: on values of few
    bits, whose sums every order gets exactly, the result is the exact sum rounded to the result type."""
    rng = np.random.default_rng(5)
    for shape in [(4099,), (33, 130), (5, 6, 7)]:
        x = (rng.integers(-40, 41, size=shape) / 8).astype(dtype)
        for axis in axis_forms(len(shape)):
            for op in (op for op in ops_where(result="sum") if op not in PRODUCTS):
                xw = x.astype(np.float64) if not is_bf16(x.dtype) else x.astype(np.float32).astype(np.float64)
                exact = np.sum(TERMS[op](xw), axis=axis)
                want = np.asarray(np.asarray(exact).astype(np.float32).astype(dtype))
                got = np.asarray(getattr(eng, op)(x, axis=axis))
                assert got.dtype == dtype
                np.testing.assert_array_equal(wide(got), wide(want), err_msg=f"{op}({shape}, axis={axis})")
    big = np.array([2048] + [1] * 100, dtype)  # float16 / bfloat16 alone would stay at 2048
    assert eng.sum(big) == np.float32(2148).astype(dtype)
    eps, _ = float_info(np.dtype(dtype))
    assert abs(wide(eng.mean(big)) - np.longdouble(2148) / 101) <= (eps / 2 + 2**-24) * (2148 / 101)
    assert eng.sum(big, deterministic=True) == np.float32(2148).astype(dtype)


def test_op_info_is_what_the_methods_do(eng):
    """tandem.op_info, which the cases above are generated from, says what each method does: its result
    type on int32 input ('sum': int64, 'mean': float64, 'value': int32, 'index': int64), what no elements
    give ('zero': 0, 'nan': NaN with a RuntimeWarning, 'error': tandem.ValueError) and whether it takes dtype=
    and initial= (else Python's TypeError)."""
    assert list(tandem.op_info) == list(tandem.ops)
    results = {"sum": np.int64, "mean": np.float64, "value": np.int32, "index": np.int64}
    x = np.arange(-3, 9, dtype=np.int32).reshape(3, 4)
    for op, row in tandem.op_info.items():
        assert set(row) == {"result", "empty", "dtype", "initial"}, f"{op}: {row}"
        method = getattr(eng, op)
        assert type(method(x)) is results[row["result"]], f"{op}: {row['result']!r}, but {type(method(x))}"
        assert method(x, axis=0).dtype == results[row["result"]], op
        if row["empty"] in ("zero", "one"):
            e = 0 if row["empty"] == "zero" else 1
            assert method(np.zeros((0, 2)), axis=0).tolist() == [e, e] and method(np.zeros(0)) == e, op
        elif row["empty"] == "nan":  # NumPy's mean of nothing
            with pytest.warns(RuntimeWarning):
                assert np.isnan(method(np.zeros(0))) and np.isnan(method(np.zeros((0, 2)), axis=0)).all(), op
        else:
            assert row["empty"] == "error", f"{op}: {row}"
            with pytest.raises(tandem.ValueError):
                method(np.zeros(0))
        if row["dtype"]:
            assert method(x, dtype=np.float32).dtype == np.float32, op
        else:
            with pytest.raises(TypeError):
                method(x, dtype=np.float32)
        if row["initial"]:  # (test_initial.py: what it gives)
            assert method(np.zeros(0, np.int32), initial=7) == 7, op
        else:
            with pytest.raises(TypeError):
                method(x, initial=7)


def test_host_sequences(eng):
    """Anything np.asarray takes, with np.asarray's element type."""
    assert type(eng.sum([1, 2, 3])) is np.int64 and eng.sum([1, 2, 3]) == 6
    assert type(eng.mean([1.0, 2.0])) is np.float64 and eng.mean([1.0, 2.0]) == 1.5
    assert type(eng.argmax((1.0, 3.0, 2.0))) is np.int64 and eng.argmax((1.0, 3.0, 2.0)) == 1
    np.testing.assert_array_equal(eng.max([[1, 5], [7, 2]], axis=0), np.array([7, 5]))
    assert eng.sum(2.5) == 2.5 and type(eng.sum(2.5)) is np.float64


# ---------------------------------------------------------------------------------------------------
# dtype=


def dtype_forms(want):
    """The ways to name the result type `want` (a NumPy dtype of tandem.dtypes): the dtype, its scalar type
    (np.float32; ml_dtypes.bfloat16), its name, and the Python type NumPy reads as it (float, int)."""
    return [want, want.type, want.name] + [t for t in (float, int) if np.dtype(t) == want]


@pytest.mark.parametrize("dtype", DTYPE_PARAMS)
@pytest.mark.parametrize("op", DTYPE_OPS)
def test_dtype_argument(eng, op, dtype):
    """dtype= picks the result type; the input is converted first where NumPy's would accumulate wider or of
    another kind (float64; a float for integers; an integer for floats)."""
    failures = Failures()
    for want_name, want in DTYPE_OF.items():  # each result type of tandem.dtypes
        if want is None or want.kind == "b":
            continue  # (bfloat16 without ml_dtypes; dtype=bool, NumPy's logical accumulation, is refused)
        for shape in [(7,), (0,), (3, 5), (2, 3, 4)]:
            x = values(shape, dtype, seed=11)
            if is_float(dtype) and not is_float(want):
                x = x * np.asarray(3.3, dtype)  # fractions, truncated by the conversion to integers
                if want.kind == "u":
                    x = np.abs(x)  # (a negative float into an unsigned type: no value in C or NumPy)
            for axis in [None, 0, -1, tuple(range(x.ndim))[-2:]]:
                for keepdims, use_out in [(False, False), (True, False), (False, True)]:
                    with failures.case(f"{op}(<{dtype} {shape}>, axis={axis!r}, dtype={want_name}, "
                                       f"keepdims={keepdims}, out={use_out})"):
                        check_reduction(eng, op, x, axis, keepdims, use_out, want=want)
        x = values((4, 5), dtype, seed=12)
        for form in dtype_forms(want):  # each spelling gives the same type
            with failures.case(f"{op}(<{dtype}>, dtype={form!r})"):
                assert getattr(eng, op)(x, axis=0, dtype=form).dtype == want
                assert getattr(eng, op)(x, dtype=form).dtype == want
    failures.check()


def test_dtype_converts_first(eng):
    """The points where converting first matters, as NumPy computes them."""
    f = np.array([1.7, 2.9, -1.5, 0.5])
    assert eng.sum(f, dtype=np.int32) == 2  # each element truncated (NumPy 1's np.sum(f, dtype=np.int32))
    assert eng.mean(f, dtype=np.int64) == 0  # the sum 2, divided by 4, truncated
    i = np.array([2**31 - 1] * 4, np.int32)
    assert eng.sum(i) == np.sum(i) == 4 * (2**31 - 1)  # int64: no wrap-around
    assert eng.sum(i, dtype=np.float32) == np.sum(i, dtype=np.float32)
    assert eng.mean(i) == np.mean(i)
    small = np.full(3, 1 + 2.0**-20, np.float32)  # float64 accumulation keeps the low bits
    assert eng.sum(small, dtype=np.float64) == np.sum(small.astype(np.float64))
    torch = None
    try:
        import torch
    except ImportError:
        pass
    if torch is not None:  # a PyTorch dtype names the same type (on host arrays too)
        assert eng.sum(f, dtype=torch.float32).dtype == np.float32
        assert eng.sum(f.astype(np.float32), dtype=torch.float64).dtype == np.float64


# ---------------------------------------------------------------------------------------------------
# out=


def test_out_casting_and_layouts(eng):
    x = values((4, 6), np.dtype(np.float64), seed=2)
    want = np.sum(x.astype(np.longdouble), axis=0)
    for out in (np.zeros(6, np.float32), np.zeros(6, np.float16), np.zeros(12)[::2],
                np.zeros((6, 2))[:, 1]):  # same_kind: float64 into narrower floats; strided outs
        assert eng.sum(x, axis=0, out=out) is out
        eps, _ = float_info(out.dtype)
        np.testing.assert_allclose(out, want.astype(np.float64), rtol=2 * eps)
    out = np.zeros((6, 1)).T  # keepdims' shape, a transposed view
    assert eng.max(x, axis=0, keepdims=True, out=out) is out
    np.testing.assert_array_equal(out, np.max(x, axis=0, keepdims=True))
    i = values((4, 6), np.dtype(np.int32), seed=2)
    out = np.zeros(6)  # int64 sums into float64: allowed
    assert eng.sum(i, axis=0, out=out) is out
    np.testing.assert_array_equal(out, np.sum(i, axis=0))
    out = np.zeros(4, np.int32)  # argmin's int64 into int32: same kind
    assert eng.argmin(x, axis=1, out=out) is out
    np.testing.assert_array_equal(out, np.argmin(x, axis=1))
    out = np.zeros((), np.float64)  # a full reduction into a 0-d array
    assert eng.sum(x, out=out) is out and out.shape == ()
    for op in OPS:  # a float result into an integer out: 'same_kind' refuses
        if op not in ARG_OPS:
            with pytest.raises(tandem.TypeError):
                getattr(eng, op)(x, axis=0, out=np.zeros(6, np.int64))
    for op in ops_where(result="mean"):
        with pytest.raises(tandem.TypeError):
            getattr(eng, op)(i, axis=0, out=np.zeros(6, np.int64))  # int mean is float64
    for bad_shape in [(4,), (1, 6), (6, 1), (7,)]:
        with pytest.raises(tandem.ValueError, match=re.escape(str(bad_shape))):
            eng.sum(x, axis=0, out=np.zeros(bad_shape))
    with pytest.raises(tandem.ValueError):
        eng.sum(x, axis=0, keepdims=True, out=np.zeros(6))  # keepdims: (1, 6)
    with pytest.raises(tandem.ValueError):
        eng.sum(x, out=np.zeros(1))  # a full reduction's result has shape ()


def test_out_any_layout(eng):
    """out= is any writable array of the result's shape, as NumPy's: negative strides, a transposed
    matrix, an empty array (whose strides NumPy may give as 0)."""
    x = values((4, 6, 5), np.dtype(np.float64), seed=4)
    failures = Failures()
    outs = {"reversed": np.zeros(12)[::-2], "reversed 2-D": np.zeros((6, 5))[::-1, ::-1],
            "transposed": np.zeros((5, 6)).T, "Fortran": np.zeros((6, 5), order="F")}
    for name, out in outs.items():
        with failures.case(f"sum(<(4, 6, 5)>, axis={0 if out.ndim == 2 else (0, 2)}, out=<{name}>)"):
            axis = 0 if out.ndim == 2 else (0, 2)
            assert eng.sum(x, axis=axis, out=out) is out
            np.testing.assert_allclose(out, np.sum(x, axis=axis), rtol=1e-13)
    for shape, axis in [((0, 3, 4), 2), ((3, 0, 4), 0), ((2, 3, 0), (0, 1))]:
        e = np.zeros(shape)
        want = np.sum(e, axis=axis)
        for op in OPS:
            if op in ARG_OPS and isinstance(axis, tuple):
                continue  # (one axis only)
            if op in NO_IDENTITY and math.prod(shape[a] for a in np.atleast_1d(axis)) == 0:
                continue  # (an error)
            out = np.empty(want.shape, np.int64 if op in ARG_OPS else np.float64)
            with failures.case(f"{op}(<{shape}>, axis={axis}, out=<empty {want.shape}, strides {out.strides}>)"), \
                    warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # (a mean of nothing warns, as NumPy's)
                assert getattr(eng, op)(e, axis=axis, out=out) is out
    failures.check()


# ---------------------------------------------------------------------------------------------------
# axis=


def test_integer_axis_types(eng):
    """NumPy takes any integer as an axis (operator.index): np.int64 from shapes and arithmetic."""
    a = values((3, 4, 5), np.dtype(np.float64))
    for axis in (np.int64(1), np.int32(-1), (np.int64(0), 2)):
        check_reduction(eng, "sum", a, tuple(int(v) for v in axis) if isinstance(axis, tuple) else int(axis), False,
                        False)
        np.testing.assert_allclose(eng.sum(a, axis=axis), np.sum(a, axis=axis), rtol=1e-12)
    assert eng.argmax(a, axis=np.int64(2)).shape == (3, 4)


# ---------------------------------------------------------------------------------------------------
# Hypothesis: random shapes and views


try:
    from hypothesis import given, settings
    from hypothesis import strategies as st
    have_hypothesis = True
except ImportError:
    have_hypothesis = False

if not have_hypothesis:

    @pytest.mark.skip(reason="the property test needs Hypothesis (python3-hypothesis)")
    def test_property_random_views():
        pass

else:

    @st.composite
    def views(draw, dt):
        """An array of dtype dt with a random shape (0 to 4 dimensions, lengths 0 to 6, now and then up to
        70) seen through random steps (negative too), a random axis order and maybe a broadcast axis."""
        ndim = draw(st.integers(0, 4))
        lengths = st.integers(0, 6) | st.integers(7, 70)
        shape = tuple(draw(st.lists(lengths, min_size=ndim, max_size=ndim)))
        while math.prod(shape) > 6000:
            shape = tuple(max(n // 2, 1) for n in shape)
        steps = tuple(draw(st.lists(st.sampled_from([1, 2, 3, -1, -2]), min_size=ndim, max_size=ndim)))
        base = values(tuple(n * abs(s) for n, s in zip(shape, steps)), dt, seed=draw(st.integers(0, 2**16)))
        x = base[tuple(slice(None, None, s) for s in steps)]
        x = x[tuple(slice(0, n) for n in shape)]
        perm = draw(st.permutations(range(ndim)))
        x = np.transpose(np.asarray(x), perm)
        if ndim and draw(st.booleans()):
            d = draw(st.integers(0, ndim - 1))
            x = np.broadcast_to(x[tuple(slice(0, 1) if i == d else slice(None) for i in range(ndim))], x.shape)
        return x

    # The same examples on every run (a CI log that can be replayed); TANDEM_HYPOTHESIS_RANDOM=1 draws new
    # ones, TANDEM_HYPOTHESIS_EXAMPLES=N more of them (as test_layouts.py's: N / 25 for each op and dtype).
    @pytest.mark.parametrize("dtype", DTYPE_PARAMS)
    @pytest.mark.parametrize("op", OPS)
    @settings(max_examples=max(1, int(os.environ.get("TANDEM_HYPOTHESIS_EXAMPLES", "300")) // 25), deadline=None,
              derandomize=os.environ.get("TANDEM_HYPOTHESIS_RANDOM") != "1", database=None)
    @given(data=st.data())
    def test_property_random_views(op, dtype, data):
        x = data.draw(views(dtype), label="x")
        axis = data.draw(st.sampled_from(axis_forms(x.ndim, tuples=op not in ARG_OPS)), label="axis")
        keepdims, use_out, deterministic = (data.draw(st.booleans(), label=n)
                                            for n in ("keepdims", "out", "deterministic"))
        backend = data.draw(st.sampled_from(BACKENDS), label="backend")
        check_reduction(tandem.Engine(backend), op, x, axis, keepdims, use_out, deterministic=deterministic)
