"""NumPy's conventions for tandem.Engine's reductions and matmul, generated from the tables rather than
picked: every op of tandem.ops x every element type of tandem.dtypes x shapes of 0 to 4 dimensions (zero
lengths included) x every axis form (None, each axis, each negative axis, every tuple of axes) x keepdims
x layouts (C, Fortran, transposed, strided, negative strides, broadcast) x out=None / out=array, each
against NumPy: the result's type, dtype and shape, and its values (exact for min, max, argmin, argmax and
integer results; float sums and means within one rounding of the result type plus the accumulation
bound of an independent reference in long double). Then a Hypothesis property test on random shapes and
views, NaN and infinities, every kernel, dtype=, out=, the error kinds and their messages, matmul against
np.matmul (every layout pair, out=, alpha / beta, transposes, batches, empty operands), the version and
repr. A loop's failing cases are reported together (Failures): one module bug does not hide another."""
import contextlib
import itertools
import math
import os
import pathlib
import re
import warnings

import numpy as np
import pytest

import tandem

BACKENDS = ["cpu"] + (["cuda"] if "cuda: usable" in tandem.info() else [])
OPS = list(tandem.ops)
ARG_OPS = ("argmin", "argmax")
SUM_OPS = ("sum", "mean", "sumsq")  # the ops with dtype= (NumPy's accumulating reductions)
NO_IDENTITY = ("min", "max", "mean", "argmin", "argmax")  # of no elements: tandem.ValueError

try:
    import ml_dtypes
    BF16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # bfloat16 is NumPy's only through ml_dtypes
    ml_dtypes = None
    BF16 = None

DTYPES = [np.dtype(n) if n != "bfloat16" else BF16 for n in tandem.dtypes]
DTYPE_PARAMS = [pytest.param(d, id=n) if d is not None else
                pytest.param(None, id=n, marks=pytest.mark.skip(reason="bfloat16 needs ml_dtypes"))
                for n, d in zip(tandem.dtypes, DTYPES)]

SHAPES = [(), (0,), (1,), (2,), (7,), (31,), (4099,),
          (3, 5), (1, 6), (0, 3), (3, 0), (0, 0), (33, 130),
          (2, 3, 4), (3, 1, 5), (2, 0, 3), (0, 2, 0),
          (2, 3, 4, 5), (2, 1, 3, 2), (1, 2, 0, 3)]

# Words of tandem's C++ API that no Python message may contain.
CXX_WORDS = ("Backend::", "EngineOptions::", "count == 0", "KernelInfo::", "std::", "tandem::")


@pytest.fixture(params=BACKENDS, scope="module")
def eng(request):
    return tandem.Engine(request.param)


# ---------------------------------------------------------------------------------------------------
# The independent reference


def is_bf16(dt):
    # (not `dt == BF16`: NumPy reads None as float64, and np.dtype("float64") == None is True)
    return BF16 is not None and dt is not None and np.dtype(dt) == BF16


def is_float(dt):
    return dt.kind == "f" or is_bf16(dt)


def float_info(dt):
    """(eps, smallest subnormal) of a float type (bfloat16 through ml_dtypes)."""
    fi = ml_dtypes.finfo(dt) if is_bf16(dt) else np.finfo(dt)
    return float(fi.eps), float(fi.smallest_subnormal)


def wide(x):
    """x's values in long double (bfloat16 through float32, which holds it exactly)."""
    x = np.asarray(x)
    if is_bf16(x.dtype):
        x = x.astype(np.float32)
    return x.astype(np.longdouble)


def plain(x):
    """x with bfloat16 as float32 (exactly), for NumPy's own min / max / argmin / argmax."""
    return x.astype(np.float32) if is_bf16(x.dtype) else x


def values(shape, dtype, seed=0):
    """Test data: for floats, uniform values with about a third from a few halves (ties for argmin /
    argmax, +0.0 but never -0.0: the sign of zero is tandem's IEEE rule, not NumPy's first zero); for
    integers small ones (with ties)."""
    rng = np.random.default_rng(seed)
    if not is_float(dtype):
        return rng.integers(-50, 51, size=shape).astype(dtype)
    v = rng.uniform(-4, 4, size=shape)
    ties = rng.random(size=shape) < 0.35
    v[ties] = rng.integers(-4, 5, size=shape)[ties] / 2
    v = v.astype(np.float32).astype(dtype)
    return np.where(v == 0, np.zeros((), dtype), v)  # (no -0.0 from rounding)


def normalize(axis, ndim):
    """The reduced axes of NumPy's axis= as a sorted tuple."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, int):
        return (axis % ndim,)
    return tuple(sorted(a % ndim for a in axis))


def result_shape(shape, axes, keepdims):
    if keepdims:
        return tuple(1 if d in axes else n for d, n in enumerate(shape))
    return tuple(n for d, n in enumerate(shape) if d not in axes)


def result_dtype(op, dt, want=None):
    """The conventions' result type (checked against NumPy's own in check_reduction for NumPy's types)."""
    if op in ARG_OPS:
        return np.dtype(np.int64)
    if want is not None:
        return np.dtype(want)
    if op in ("sum", "sumsq"):
        return dt if is_float(dt) else np.dtype(np.int64)
    if op == "mean":
        return dt if is_float(dt) else np.dtype(np.float64)
    return dt


def accumulated_input(x, want):
    """The input as dtype=want has it read: converted first where want is float64 or of the other kind
    (a float for an integer input, an integer for a float input), as NumPy converts each element."""
    if want is not None and (is_float(x.dtype) != is_float(want) or want == np.float64):
        return x.astype(want)
    return x


def numpy_call(op, x, axis, keepdims, want=None):
    """NumPy's own answer (sumsq: the sum of np.square), for its result type, shape and scalar-ness."""
    kw = {} if op in ("min", "max") + ARG_OPS else {"dtype": want}
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        if op == "sumsq":
            return np.sum(np.square(x), axis=axis, keepdims=keepdims, **kw)
        f = {"sum": np.sum, "mean": np.mean, "min": np.min, "max": np.max, "argmin": np.argmin, "argmax": np.argmax}[op]
        return f(x, axis=axis, keepdims=keepdims, **kw)


@np.errstate(invalid="ignore", over="ignore")
def reference(op, x, axis, want=None):
    """(expected values with keepdims=True, error bound or None for exact) for reducing x along axis.
    Independent of tandem: long double sums, NumPy's min / max / argmin / argmax."""
    axes = normalize(axis, x.ndim)
    rdt = result_dtype(op, x.dtype, want)
    if op in ("min", "max"):
        return getattr(np, op)(plain(x), axis=axes, keepdims=True), None
    if op in ARG_OPS:
        return getattr(np, op)(plain(x), axis=axis, keepdims=True), None
    xr = accumulated_input(x, want)
    n = math.prod(x.shape[d] for d in axes)
    if not is_float(rdt) or not is_float(xr.dtype) and op != "mean":  # exact integer arithmetic
        xi = xr.astype(np.int64)
        total = np.sum(xi * xi if op == "sumsq" else xi, axis=axes, keepdims=True)
        if op == "mean":  # NumPy: the sum in the result type, divided, cast back (toward zero)
            total = np.trunc(total / n)
        return total.astype(rdt), None
    w = wide(xr)
    terms = w * w if op == "sumsq" else w
    ref = np.sum(terms, axis=axes, keepdims=True)
    magnitude = np.sum(np.abs(terms), axis=axes, keepdims=True)
    if op == "mean":
        ref, magnitude = ref / n, magnitude / n
    # The accumulation: any order of n - 1 additions (and sumsq's products, mean's division) in the
    # compute type, float64 where the input (or an integer input of a float64 mean) is float64, else
    # float32; then one rounding to the result type.
    compute = np.float64 if xr.dtype in (np.float64, np.int32, np.int64) else np.float32
    eps_c = float(np.finfo(compute).eps)
    eps_r, tiny = float_info(rdt)
    acc = (n + 2) * eps_c * magnitude + eps_c * np.abs(ref)
    return ref, acc + eps_r * (np.abs(ref) + acc) + tiny


@np.errstate(invalid="ignore", over="ignore")
def check_values(op, got, ref, bound, rdt):
    got_w = wide(got)
    if bound is None:  # exact: the same values (NaN where NumPy's has NaN)
        want = np.asarray(ref).astype(rdt)
        same = np.array_equal(got_w, wide(want), equal_nan=True) if is_float(rdt) else np.array_equal(got, want)
        assert same, f"{op}: values {np.asarray(got)!r}, NumPy's {want!r}"
        return
    nan = np.isnan(ref)
    assert (np.isnan(got_w) == nan).all(), f"{op}: NaN where NumPy has none, or none where it has: {got!r} vs {ref!r}"
    # Infinities, and results beyond the result type's range (a float16 sum of squares): infinite.
    top = float(ml_dtypes.finfo(rdt).max if is_bf16(rdt) else np.finfo(rdt).max)
    inf = np.isinf(ref) | (np.abs(ref) - bound > top * (1 + float_info(rdt)[0] / 2))
    assert (got_w[inf] == np.sign(ref[inf]) * np.inf).all(), f"{op}: infinities as NumPy's: {got!r} vs {ref!r}"
    beyond = ~inf & (np.abs(ref) + bound > top)  # (at the edge of the range: either)
    bound = np.where(beyond & np.isinf(got_w), np.inf, bound)
    err = np.where(np.isinf(bound), 0, np.abs(got_w - ref))
    bad = ~nan & ~inf & ~(err <= bound)
    assert not bad.any(), (f"{op}: {int(bad.sum())} results off by more than the bound; first: got "
                           f"{got_w[bad][0]!r}, reference {ref[bad][0]!r}, bound {bound[bad][0]!r}")


class Expected:
    """What eng.<op>(x, axis=axis, dtype=want) must give, whatever keepdims and out=: the result type,
    the reduced axes, whether it is an error (a reduction of no elements without identity), NumPy's own
    result type and scalar-ness, and the independent reference values (keepdims' shape) with their bound."""

    def __init__(self, op, x, axis, want=None):
        self.op, self.x, self.axis, self.want = op, x, axis, want
        self.axes = normalize(axis, x.ndim)
        self.full = len(self.axes) == x.ndim
        self.rdt = result_dtype(op, x.dtype, want)
        self.n = math.prod(x.shape[d] for d in self.axes)
        self.error = op in NO_IDENTITY and self.n == 0  # (NumPy: an error; mean: NaN there, an error here)
        self.numpy = None
        if self.error:
            if not is_bf16(x.dtype) and op != "mean":
                with pytest.raises(ValueError):
                    numpy_call(op, x, axis, False)
            return
        if not is_bf16(x.dtype) and not is_bf16(want):
            try:
                self.numpy = numpy_call(op, x, axis, False, want)  # NumPy's type, dtype and shape
            except TypeError:  # (a NumPy that refuses the cast dtype= asks for: the table alone)
                self.numpy = None
        if self.numpy is not None:
            assert self.numpy.dtype == self.rdt, f"the table's result type {self.rdt} is not NumPy's {self.numpy.dtype}"
            assert np.shape(self.numpy) == result_shape(x.shape, self.axes, False)
        self.ref, self.bound = reference(op, x, axis, want)


def check_reduction(eng, op, x, axis, keepdims, use_out, want=None, expected=None, **kw):
    """One call of eng.<op>(x, axis=..., keepdims=..., out=..., dtype=...) against NumPy's conventions
    (expected: an Expected of the same op, x, axis and want, shared by calls that differ in keepdims / out)."""
    e = expected or Expected(op, x, axis, want)
    rdt = e.rdt
    shape = result_shape(x.shape, e.axes, keepdims)
    args = dict(axis=axis, keepdims=keepdims, **kw)
    if want is not None:
        args["dtype"] = want
    out = None
    if use_out:
        out = np.full(shape, 7, dtype=rdt)
        args["out"] = out
    if e.error:
        with pytest.raises(tandem.ValueError) as err:
            getattr(eng, op)(x, **args)
        msg = str(err.value)
        assert str(tuple(x.shape)) in msg, f"the message names the shape {x.shape}: {msg}"
        if not e.full:
            assert "axis" in msg or "axes" in msg, f"the message names the axis: {msg}"
        assert not any(w in msg for w in CXX_WORDS), msg
        return
    got = getattr(eng, op)(x, **args)
    if use_out:
        assert got is out, f"{op}: out= is returned"
    elif e.full and not keepdims:  # NumPy's full reductions: NumPy scalars of the result type
        assert isinstance(got, np.generic), f"{op}: a NumPy scalar, got {type(got).__name__}"
        assert type(got) is rdt.type, f"{op}: {type(got).__name__}, expected {rdt.type.__name__}"
        assert e.numpy is None or not isinstance(e.numpy, np.ndarray)
    else:  # (keepdims of a 0-d input: NumPy gives a scalar there, tandem a 0-d array; either is fine)
        assert isinstance(got, np.ndarray), f"{op}: an array, got {type(got).__name__}"
        assert e.numpy is None or keepdims or isinstance(e.numpy, np.ndarray)
    assert got.dtype == rdt, f"{op}({x.dtype}, dtype={want}): result {got.dtype}, expected {rdt}"
    assert got.shape == shape, f"{op}: shape {got.shape}, expected {shape}"
    ref = np.reshape(e.ref, shape)
    bound = None if e.bound is None else np.reshape(e.bound, shape)
    check_values(op, got, ref, bound, rdt)


# ---------------------------------------------------------------------------------------------------
# The generated combinations


class Failures:
    """The failing cases of a loop, reported together (the first few in full, and how many in all): one
    wrong case does not hide the others."""

    def __init__(self):
        self.cases = []
        self.count = 0

    @contextlib.contextmanager
    def case(self, name):
        try:
            yield
        except (AssertionError, tandem.Error, pytest.fail.Exception) as e:
            self.count += 1
            if len(self.cases) < 12:
                self.cases.append(f"{name}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")

    def check(self):
        assert not self.count, f"{self.count} failing cases; the first:\n" + "\n".join(self.cases)


def axis_forms(ndim, tuples=True):
    """None, each axis, each negative axis, and (tuples) every tuple of axes in order, each nonempty one
    also negative and reversed ((), the empty tuple, reduces nothing; all axes: the same as None)."""
    forms = [None] + list(range(ndim)) + [d - ndim for d in range(ndim)]
    if tuples:
        for r in range(ndim + 1):
            for comb in itertools.combinations(range(ndim), r):
                forms.append(comb)
                if r:
                    forms.append(tuple(d - ndim for d in reversed(comb)))
    return forms


def layouts(a):
    """(name, view) pairs with a's shape in the layouts NumPy makes: C, Fortran, transposed (an axis
    permutation of a C array), strided (every axis stepped), negative strides (every axis, and one axis
    with a step), broadcast (stride 0 along the first or the last axis; their own values)."""
    yield "C", a
    if a.ndim == 0:
        return
    if a.ndim >= 2:
        yield "F", np.asfortranarray(a)
        yield "transposed", np.moveaxis(np.ascontiguousarray(np.moveaxis(a, 0, -1)), -1, 0)
    big = np.zeros(tuple(2 * n + 1 for n in a.shape), a.dtype)
    inner = tuple(slice(1, 2 * n + 1, 2) for n in a.shape)
    big[inner] = a
    yield "strided", big[inner]
    yield "reversed", np.flip(np.ascontiguousarray(np.flip(a)))
    big = np.zeros((2 * a.shape[0] + 1,) + a.shape[1:], a.dtype)
    big[1::2] = a[::-1]
    yield "reversed_step", big[-2::-2] if a.shape[0] else big[:0]
    yield "broadcast_first", np.broadcast_to(a[:1], a.shape)
    if a.ndim >= 2:
        yield "broadcast_last", np.broadcast_to(a[..., :1], a.shape)


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


def shape_id(s):
    return "x".join(map(str, s)) if s else "0d"


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
            for op in ("sum", "sumsq"):
                xw = x.astype(np.float64) if not is_bf16(x.dtype) else x.astype(np.float32).astype(np.float64)
                exact = np.sum(xw * xw if op == "sumsq" else xw, axis=axis)
                want = np.asarray(np.asarray(exact).astype(np.float32).astype(dtype))
                got = np.asarray(getattr(eng, op)(x, axis=axis))
                assert got.dtype == dtype
                np.testing.assert_array_equal(wide(got), wide(want), err_msg=f"{op}({shape}, axis={axis})")
    big = np.array([2048] + [1] * 100, dtype)  # float16 / bfloat16 alone would stay at 2048
    assert eng.sum(big) == np.float32(2148).astype(dtype)
    eps, _ = float_info(np.dtype(dtype))
    assert abs(wide(eng.mean(big)) - np.longdouble(2148) / 101) <= (eps / 2 + 2**-24) * (2148 / 101)
    assert eng.sum(big, deterministic=True) == np.float32(2148).astype(dtype)


def test_every_kernel(eng):
    """Each reduce kernel of eng.kernel_info() gives NumPy's answers for the ops and element types it lists
    (full reductions; along an axis where it runs per row / column, else a tandem.ValueError)."""
    failures = Failures()
    for k in eng.kernel_info()["reduce"]:
        if k["requirement"]:
            continue  # (a kernel this device may not run)
        for op in k["ops"]:
            for dtype in DTYPES:
                if dtype is None:
                    continue
                if np.dtype(dtype).name not in k["dtypes"]:  # a type it does not take: tandem.TypeError
                    with failures.case(f"{op}(<{dtype}>, kernel={k['name']!r}) refused"):
                        with pytest.raises(tandem.TypeError) as e:
                            getattr(eng, op)(values((7,), dtype, seed=7), kernel=k["name"])
                        assert not any(w in str(e.value) for w in CXX_WORDS + ("double",)), str(e.value)
                    continue
                for shape, axis in [((4099,), None), ((33, 130), None), ((33, 130), 1), ((33, 130), 0)]:
                    x = values(shape, dtype, seed=7)
                    name = f"{op}(<{dtype} {shape}>, axis={axis}, kernel={k['name']!r})"
                    if axis is not None and not k["per_row_col"]:
                        with failures.case(name):
                            with pytest.raises(tandem.ValueError) as e:
                                getattr(eng, op)(x, axis=axis, kernel=k["name"])
                            assert not any(w in str(e.value) for w in CXX_WORDS), str(e.value)
                        continue
                    with failures.case(name):
                        check_reduction(eng, op, x, axis, False, False, kernel=k["name"])
    for k in eng.kernel_info()["matmul"]:
        if k["requirement"] or k["precision"] != "full":
            continue
        for dtype in MATMUL_DTYPES:
            a, b = values((37, 19), dtype, seed=1), values((19, 23), dtype, seed=2)
            with failures.case(f"matmul(<{dtype} (37, 19)>, <(19, 23)>, kernel={k['name']!r})"):
                rdt = np.dtype(np.float64) if dtype == np.float64 else np.dtype(np.float32)
                check_matmul(eng.matmul(a, b, kernel=k["name"]), a, b, rdt)
    failures.check()


def test_host_sequences(eng):
    """Anything np.asarray takes, with np.asarray's element type."""
    assert type(eng.sum([1, 2, 3])) is np.int64 and eng.sum([1, 2, 3]) == 6
    assert type(eng.mean([1.0, 2.0])) is np.float64 and eng.mean([1.0, 2.0]) == 1.5
    assert type(eng.argmax((1.0, 3.0, 2.0))) is np.int64 and eng.argmax((1.0, 3.0, 2.0)) == 1
    np.testing.assert_array_equal(eng.max([[1, 5], [7, 2]], axis=0), np.array([7, 5]))
    assert eng.sum(2.5) == 2.5 and type(eng.sum(2.5)) is np.float64


# ---------------------------------------------------------------------------------------------------
# dtype=


DTYPE_FORMS = {  # the ways to name a result type: NumPy dtype, its type, its name, a Python type
    "float64": [np.dtype(np.float64), np.float64, "float64", float],
    "int64": [np.dtype(np.int64), np.int64, "int64", int],
    "float32": [np.dtype(np.float32), np.float32, "float32"],
    "int32": [np.dtype(np.int32), np.int32, "int32"],
    "float16": [np.dtype(np.float16), np.float16, "float16"],
    "bfloat16": ["bfloat16"] + ([BF16] if BF16 is not None else []),
}


@pytest.mark.parametrize("dtype", DTYPE_PARAMS)
@pytest.mark.parametrize("op", SUM_OPS)
def test_dtype_argument(eng, op, dtype):
    """dtype= picks the result type; the input is converted first where NumPy's would accumulate wider or of
    another kind (float64; a float for integers; an integer for floats)."""
    failures = Failures()
    for want_name, forms in DTYPE_FORMS.items():
        if want_name == "bfloat16" and BF16 is None:
            continue
        want = np.dtype(want_name) if want_name != "bfloat16" else BF16
        for shape in [(7,), (0,), (3, 5), (2, 3, 4)]:
            x = values(shape, dtype, seed=11)
            if is_float(dtype) and not is_float(want):
                x = x * np.asarray(3.3, dtype)  # fractions, truncated by the conversion to integers
            for axis in [None, 0, -1, tuple(range(x.ndim))[-2:]]:
                for keepdims, use_out in [(False, False), (True, False), (False, True)]:
                    with failures.case(f"{op}(<{dtype} {shape}>, axis={axis!r}, dtype={want_name}, "
                                       f"keepdims={keepdims}, out={use_out})"):
                        check_reduction(eng, op, x, axis, keepdims, use_out, want=want)
        x = values((4, 5), dtype, seed=12)
        for form in forms:  # each spelling gives the same type
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
    for op in ("sum", "mean", "min", "max"):  # a float result into an integer out: 'same_kind' refuses
        with pytest.raises(tandem.TypeError):
            getattr(eng, op)(x, axis=0, out=np.zeros(6, np.int64))
    with pytest.raises(tandem.TypeError):
        eng.mean(i, axis=0, out=np.zeros(6, np.int64))  # int mean is float64
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
        for op in ("sum", "sumsq", "max", "argmax"):
            if op in ARG_OPS and isinstance(axis, tuple):
                continue  # (one axis only)
            if op in NO_IDENTITY and math.prod(shape[a] for a in np.atleast_1d(axis)) == 0:
                continue  # (an error)
            out = np.empty(want.shape, np.int64 if op == "argmax" else np.float64)
            with failures.case(f"{op}(<{shape}>, axis={axis}, out=<empty {want.shape}, strides {out.strides}>)"):
                assert getattr(eng, op)(e, axis=axis, out=out) is out
    failures.check()


# ---------------------------------------------------------------------------------------------------
# Errors


def error_cases():
    """(name, call, expected tandem exception, text the message must hold)."""
    f32 = np.zeros((5, 3), np.float32)
    a2 = np.arange(6.0).reshape(2, 3)
    non_det = [k["name"] for k in tandem.Engine("cpu").kernel_info()["reduce"] if not k["deterministic"]]
    cpu = tandem.Engine("cpu")
    return [
        ("Engine('gpu')", lambda e: tandem.Engine("gpu"), tandem.ValueError, "gpu"),
        ("unknown kernel", lambda e: e.sum(a2, kernel="nope"), tandem.ValueError, "nope"),
        ("CUDA kernel on the CPU", lambda e: cpu.sum(a2, kernel="warp_shuffle"), tandem.ValueError, "warp_shuffle"),
        ("deterministic with a non-deterministic kernel", lambda e: e.sum(a2, kernel=non_det[0], deterministic=True),
         tandem.ValueError, non_det[0]),
        ("unknown matmul kernel", lambda e: e.matmul(f32, f32.T, kernel="nope"), tandem.ValueError, "nope"),
        ("empty min", lambda e: e.min(np.zeros((0, 3))), tandem.ValueError, "(0, 3)"),
        ("empty argmax along an axis", lambda e: e.argmax(np.zeros((0, 3)), axis=0), tandem.ValueError, "(0, 3)"),
        ("empty mean along an axis", lambda e: e.mean(np.zeros((3, 0)), axis=1), tandem.ValueError, "(3, 0)"),
        ("axis out of range", lambda e: e.sum(a2, axis=2), tandem.ValueError, "2"),
        ("negative axis out of range", lambda e: e.sum(a2, axis=-3), tandem.ValueError, "-3"),
        ("axis of a 0-d array", lambda e: e.sum(np.array(1.0), axis=0), tandem.ValueError, "0"),
        ("axis in a tuple out of range", lambda e: e.max(a2, axis=(0, 2)), tandem.ValueError, "2"),
        ("repeated axis", lambda e: e.sum(a2, axis=(0, 0)), tandem.ValueError, "0"),
        ("repeated axis, negative", lambda e: e.sum(a2, axis=(1, -1)), tandem.ValueError, "axis"),
        ("axis a string", lambda e: e.sum(a2, axis="row"), tandem.TypeError, "axis"),
        ("axis a float", lambda e: e.sum(a2, axis=1.5), tandem.TypeError, "axis"),
        ("axis True", lambda e: e.sum(a2, axis=True), tandem.TypeError, "axis"),
        ("axis tuple with a float", lambda e: e.sum(a2, axis=(0, 1.0)), tandem.TypeError, "axis"),
        ("argmin with a tuple", lambda e: e.argmin(a2, axis=(0,)), tandem.TypeError, "tuple"),
        ("argmax with a tuple", lambda e: e.argmax(a2, axis=(0, 1)), tandem.TypeError, "tuple"),
        ("complex64 array", lambda e: e.sum(np.zeros(3, np.complex64)), tandem.TypeError, "complex64"),
        ("object array", lambda e: e.sum(np.array([1, "a"], dtype=object)), tandem.TypeError, "object"),
        ("string array", lambda e: e.sum(np.array(["a", "b"])), tandem.TypeError, "float32"),
        ("uint8 array", lambda e: e.max(np.zeros(3, np.uint8)), tandem.TypeError, "uint8"),
        ("dtype=complex64", lambda e: e.sum(a2, dtype=np.complex64), tandem.TypeError, "complex64"),
        ("dtype='nope'", lambda e: e.mean(a2, dtype="nope"), tandem.TypeError, "nope"),
        ("dtype=object", lambda e: e.sum(a2, dtype=object), tandem.TypeError, "object"),
        ("out= float result into int", lambda e: e.sum(a2, axis=0, out=np.zeros(3, np.int32)), tandem.TypeError,
         "int32"),
        ("out= wrong shape", lambda e: e.sum(a2, axis=0, out=np.zeros(2)), tandem.ValueError, "(2,)"),
        ("matmul shapes", lambda e: e.matmul(f32, f32), tandem.ValueError, "a (5, 3)"),
        ("matmul shapes, b named", lambda e: e.matmul(f32, f32), tandem.ValueError, "b (5, 3)"),
        ("matmul vector shapes", lambda e: e.matmul(np.zeros(4, np.float32), f32), tandem.ValueError, "(4,)"),
        ("matmul batch shapes", lambda e: e.matmul(np.zeros((2, 5, 3)), np.zeros((3, 3, 4))), tandem.ValueError,
         "(2, 5, 3)"),
        ("matmul dtypes", lambda e: e.matmul(f32, np.zeros((3, 4))), tandem.TypeError, "float32"),
        ("matmul dtypes, b's named as NumPy's", lambda e: e.matmul(f32, np.zeros((3, 4))), tandem.TypeError, "float64"),
        ("matmul dtypes, reversed", lambda e: e.matmul(np.zeros((5, 3)), np.zeros((3, 4), np.float16)),
         tandem.TypeError, "float16"),
        ("matmul ints", lambda e: e.matmul(np.zeros((2, 2), np.int32), np.zeros((2, 2), np.int32)), tandem.TypeError,
         "int32"),
        ("matmul int64", lambda e: e.matmul(np.zeros((2, 2), np.int64), np.zeros((2, 2), np.int64)), tandem.TypeError,
         "int64"),
        ("matmul 0-d", lambda e: e.matmul(np.array(1.0), np.zeros((1, 2))), tandem.ValueError, "dimension"),
        ("matmul trans_a of a vector", lambda e: e.matmul(np.zeros(3), np.zeros((3, 2)), trans_a=True),
         tandem.ValueError, "trans_a"),
        ("matmul trans_b of a vector", lambda e: e.matmul(np.zeros((2, 3)), np.zeros(3), trans_b=True),
         tandem.ValueError, "trans_b"),
        ("matmul beta without out", lambda e: e.matmul(f32, f32.T, beta=1.0), tandem.ValueError, "beta"),
        ("matmul out shape", lambda e: e.matmul(f32, f32.T, out=np.zeros((5, 4), np.float32)), tandem.ValueError,
         "(5, 4)"),
        ("matmul out dtype", lambda e: e.matmul(f32, f32.T, out=np.zeros((5, 5))), tandem.TypeError, "float64"),
        ("matmul precision", lambda e: e.matmul(f32, f32.T, precision="half"), tandem.ValueError, "half"),
        ("engine devices and device", lambda e: tandem.Engine("cpu", device=1, devices=[0, 1]), tandem.Error, "device"),
    ]


@pytest.mark.parametrize("name,call,kind,text", error_cases(), ids=[c[0] for c in error_cases()])
def test_errors_speak_python(eng, name, call, kind, text):
    """Each error is tandem's (tandem.Error, a RuntimeError), of its kind (tandem.ValueError is a ValueError,
    tandem.TypeError a TypeError), names what was wrong, and has no C++ in its message."""
    with pytest.raises(kind) as e:
        call(eng)
    assert isinstance(e.value, tandem.Error) and isinstance(e.value, RuntimeError)
    if kind is tandem.ValueError:
        assert isinstance(e.value, ValueError)
    if kind is tandem.TypeError:
        assert isinstance(e.value, TypeError)
    msg = str(e.value)
    assert text in msg, f"{name}: {text!r} not in {msg!r}"
    assert not any(w in msg for w in CXX_WORDS), f"{name}: C++ in {msg!r}"
    for word in ("C is", "op(A)", "op(B)", "double", "Dtype", "Op::"):
        assert word not in msg, f"{name}: {word!r} in {msg!r}"


def test_error_classes():
    assert issubclass(tandem.Error, RuntimeError)
    assert issubclass(tandem.ValueError, tandem.Error) and issubclass(tandem.ValueError, ValueError)
    assert issubclass(tandem.TypeError, tandem.Error) and issubclass(tandem.TypeError, TypeError)
    assert not issubclass(tandem.ValueError, TypeError) and not issubclass(tandem.TypeError, ValueError)


def test_integer_axis_types(eng):
    """NumPy takes any integer as an axis (operator.index): np.int64 from shapes and arithmetic."""
    a = values((3, 4, 5), np.dtype(np.float64))
    for axis in (np.int64(1), np.int32(-1), (np.int64(0), 2)):
        check_reduction(eng, "sum", a, tuple(int(v) for v in axis) if isinstance(axis, tuple) else int(axis), False,
                        False)
        np.testing.assert_allclose(eng.sum(a, axis=axis), np.sum(a, axis=axis), rtol=1e-12)
    assert eng.argmax(a, axis=np.int64(2)).shape == (3, 4)


# ---------------------------------------------------------------------------------------------------
# Version and repr


def test_version_and_repr():
    cmake = (pathlib.Path(__file__).parents[2] / "CMakeLists.txt").read_text()
    version = re.search(r"project\(\s*tandem\s+VERSION\s+([0-9]+\.[0-9]+\.[0-9]+)", cmake).group(1)
    assert isinstance(tandem.__version__, str) and tandem.__version__ == version
    assert repr(tandem.Engine("cpu")) == "tandem.Engine('cpu')"
    assert tandem.__version__ in tandem.info().splitlines()[0]


# ---------------------------------------------------------------------------------------------------
# matmul


MATMUL_SHAPES = [
    ((5, 3), (3, 4)), ((1, 1), (1, 1)), ((17, 9), (9, 33)),  # 2-D
    ((3,), (3, 4)), ((5, 3), (3,)), ((3,), (3,)),  # vectors: a row, a column, a dot product (0-d)
    ((7, 1, 5, 3), (2, 3, 4)), ((4, 5, 3), (4, 3, 2)), ((1, 5, 3), (6, 3, 2)), ((2, 5, 3), (3,)),
    ((3,), (2, 3, 4)), ((2, 1, 3), (3, 1)),  # batches broadcasting as np.matmul's
    ((0, 3), (3, 4)), ((5, 3), (3, 0)), ((5, 0), (0, 4)), ((0, 5, 3), (3, 4)), ((0,), (0,)),  # empty
]
MATMUL_DTYPES = [np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.float16)]
MATMUL_DTYPES += [BF16] if BF16 is not None else []


def matmul_reference(a, b, alpha=1.0, beta=0.0, c=None):
    """np.matmul in long double, and the bound: k products and additions in the compute type, then
    alpha, beta."""
    wa, wb = wide(a), wide(b)
    ref = np.matmul(wa, wb)
    mag = np.matmul(np.abs(wa), np.abs(wb))
    k = a.shape[-1]
    eps = float(np.finfo(np.float64 if a.dtype == np.float64 else np.float32).eps)
    bound = (k + 2) * eps * abs(alpha) * mag
    ref = alpha * ref
    if c is not None and beta != 0:
        ref = ref + beta * wide(c)
        bound = bound + eps * (np.abs(ref) + abs(beta) * np.abs(wide(c)))
    return ref, bound + eps * np.abs(ref) + 1e-300


def check_matmul(got, a, b, result_dtype, **kw):
    ref, bound = matmul_reference(a, b, **kw)
    got_w = wide(got)
    assert got_w.shape == ref.shape, f"shape {got_w.shape}, np.matmul's {ref.shape}"
    assert np.asarray(got).dtype == result_dtype
    err = np.abs(got_w - ref)
    assert (err <= bound).all(), f"off by {err.max()!r} (bound {bound.max()!r})"


@pytest.mark.parametrize("dtype", [pytest.param(d, id=d.name) for d in MATMUL_DTYPES])
@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=lambda s: f"{shape_id(s[0])}@{shape_id(s[1])}")
def test_matmul_like_numpy(eng, shapes, dtype):
    """Every layout of a x every layout of b, against np.matmul in long double; out= in C and Fortran
    order, alpha and beta, trans_a / trans_b."""
    sa, sb = shapes
    a = values(sa, dtype, seed=1)
    b = values(sb, dtype, seed=2)
    rdt = np.dtype(np.float64) if dtype == np.float64 else np.dtype(np.float32)
    failures = Failures()
    for (la, va), (lb, vb) in itertools.product(list(layouts(a)), list(layouts(b))):
        if (va.ndim == 1 and 0 in va.strides and va.size > 1) or (vb.ndim == 1 and 0 in vb.strides and vb.size > 1):
            continue  # (a vector of stride 0: test_matmul_broadcast_vectors, in a process of its own)
        with failures.case(f"matmul(<{la} {sa}>, <{lb} {sb}>)"):
            got = eng.matmul(va, vb)
            check_matmul(got, va, vb, rdt)
            if len(sa) + len(sb) > 2:
                assert isinstance(got, np.ndarray)
    shape = np.matmul(wide(a), wide(b)).shape
    for order in ("C", "F"):
        with failures.case(f"matmul({sa}, {sb}, out=<{order} {shape}>)"):
            out = np.full(shape, 7, rdt, order=order)
            assert eng.matmul(a, b, out=out) is out, "out= is returned"
            check_matmul(out, a, b, rdt)
        with failures.case(f"matmul({sa}, {sb}, out=<{order} {shape}>, alpha=2, beta=-0.5)"):
            c = values(shape, rdt, seed=3)
            out = np.array(c, order=order)
            assert eng.matmul(a, b, out=out, alpha=2.0, beta=-0.5) is out
            check_matmul(out, a, b, rdt, alpha=2.0, beta=-0.5, c=c)
    with failures.case(f"matmul({sa}, {sb}) with trans_a / trans_b"):
        if len(sa) >= 2:
            check_matmul(eng.matmul(np.swapaxes(a, -1, -2).copy(), b, trans_a=True), a, b, rdt)
        if len(sb) >= 2:
            check_matmul(eng.matmul(a, np.swapaxes(b, -1, -2).copy(), trans_b=True), a, b, rdt)
        if len(sa) >= 2 and len(sb) >= 2:
            check_matmul(eng.matmul(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2), trans_a=True, trans_b=True), a, b,
                         rdt)
    failures.check()


BROADCAST_VECTORS = """
import numpy as np, tandem
e = tandem.Engine(BACKEND)
for dt in (np.float32, np.float64):
    v = np.broadcast_to(dt(2), (3,))  # a vector of stride 0
    m, t, w = np.arange(12, dtype=dt).reshape(3, 4), np.arange(15, dtype=dt).reshape(5, 3), np.ones(3, dt)
    batch = np.arange(24, dtype=dt).reshape(2, 3, 4)
    for a, b in [(v, m), (t, v), (v, v), (v, w), (w, v), (v, batch), (batch.transpose(0, 2, 1), v)]:
        got = e.matmul(a, b)
        want = np.matmul(np.array(a, np.float64), np.array(b, np.float64))
        assert np.shape(got) == np.shape(want), (a.shape, b.shape, np.shape(got))
        assert np.allclose(got, want, rtol=1e-6), (a.shape, b.shape, got, want)
print("ok")
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_matmul_broadcast_vectors(backend):
    """1-D operands of stride 0 (np.broadcast_to of a scalar), as np.matmul takes them. In a process of its
    own: such a vector crashed the interpreter (a segmentation fault)."""
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "-c", BROADCAST_VECTORS.replace("BACKEND", repr(backend))],
                       capture_output=True, text=True, env=dict(os.environ))
    assert r.returncode == 0 and r.stdout.strip() == "ok", (
        f"exit status {r.returncode}{' (killed by signal %d)' % -r.returncode if r.returncode < 0 else ''}: "
        f"{r.stderr[-1500:]}")


def test_matmul_empty_k_with_beta(eng):
    """k = 0: the product is zeros; with out= and beta the result is beta * out."""
    a, b = np.zeros((4, 0)), np.zeros((0, 3))
    out = np.full((4, 3), 2.0)
    assert eng.matmul(a, b, out=out, beta=0.5) is out
    np.testing.assert_array_equal(out, np.full((4, 3), 1.0))
    out = np.full((4, 3), 2.0)
    eng.matmul(a, b, out=out)
    np.testing.assert_array_equal(out, np.zeros((4, 3)))
    np.testing.assert_array_equal(eng.matmul(np.zeros((2, 4, 0), np.float32), np.zeros((0, 3), np.float32)),
                                  np.zeros((2, 4, 3), np.float32))


def test_matmul_dot_product_is_0d(eng):
    v = np.arange(1.0, 4.0)
    got = eng.matmul(v, v)
    assert np.shape(got) == () and got == 14.0 and np.asarray(got).dtype == np.float64


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
