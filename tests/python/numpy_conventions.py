"""The shared part of the NumPy-conventions tests (test_conventions.py: reductions; test_conventions_matmul.py:
matmul; test_conventions_errors.py: kernels, errors, version): the tables the cases are generated from, the
independent reference (long double sums, NumPy's min / max / argmin / argmax and np.matmul) and the checks
of one call against it, the layouts and axis forms, and Failures (a loop's failing cases reported together:
one module bug does not hide another). Not a test file: pytest collects nothing here."""
import contextlib
import itertools
import math
import warnings

import numpy as np
import pytest

import tandem

BACKENDS = [b["name"] for b in tandem.backend_status() if b["usable"]]
OPS = list(tandem.ops)


def ops_where(**row):
    """The ops of tandem.ops whose tandem.op_info row has these values, in table order, e.g.
    ops_where(result="index"): a new op joins the cases its row puts it in."""
    return tuple(op for op in OPS if all(tandem.op_info[op][k] == v for k, v in row.items()))


def result_kind(op):
    """What op returns (tandem.op_info): 'sum', 'value', 'mean' or 'index'."""
    return tandem.op_info[op]["result"]


ARG_OPS = ops_where(result="index")  # int64 indices, along one axis only (NumPy's argmin / argmax)
DTYPE_OPS = ops_where(dtype=True)  # the ops with dtype= (NumPy's accumulating reductions)
NO_IDENTITY = ops_where(empty="error")  # of no elements: tandem.ValueError
PRODUCTS = ops_where(empty="one")  # the ops that multiply (the empty product is 1): no TERMS, a product reference

# NumPy's own reduction for each op, and for the ops that add up (result kinds 'sum' and 'mean', but the
# PRODUCTS) the terms they add. An op of tandem.ops missing here fails its tests (a KeyError naming it):
# add its NumPy reference.
NUMPY_OPS = {"sum": np.sum, "mean": np.mean, "min": np.min, "max": np.max, "argmin": np.argmin, "argmax": np.argmax,
             "sumsq": lambda x, **kw: np.sum(np.square(x), **kw), "prod": np.prod}
TERMS = {"sum": lambda v: v, "mean": lambda v: v, "sumsq": lambda v: v * v}

try:
    import ml_dtypes
    BF16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # bfloat16 is NumPy's only through ml_dtypes
    ml_dtypes = None
    BF16 = None

DTYPES = [np.dtype(n) if n != "bfloat16" else BF16 for n in tandem.dtypes]
DTYPE_OF = dict(zip(tandem.dtypes, DTYPES))  # name -> NumPy dtype (None: bfloat16 without ml_dtypes)
DTYPE_PARAMS = [pytest.param(d, id=n) if d is not None else
                pytest.param(None, id=n, marks=pytest.mark.skip(reason="bfloat16 needs ml_dtypes"))
                for n, d in zip(tandem.dtypes, DTYPES)]

def device_libraries():
    """The GPU array libraries usable here ('cupy', 'torch'): none without a usable CUDA backend."""
    found = []
    if not {b["name"]: b for b in tandem.backend_status()}["cuda"]["usable"]:
        return found
    for name in ("cupy", "torch"):
        try:
            lib = __import__(name)
            if name == "cupy" or lib.cuda.is_available():
                found.append(name)
        except Exception:
            pass
    return found


# The parameters of a test over device_libraries(): one skipped "none" where there are none.
DEVICE_LIBRARY_PARAMS = device_libraries() or [
    pytest.param("none", marks=pytest.mark.skip(reason="no usable GPU with CuPy or PyTorch"))]

# Words of tandem's C++ API that no Python message may contain.
CXX_WORDS = ("Backend::", "EngineOptions::", "count == 0", "KernelInfo::", "std::", "tandem::")


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
    integers small ones (with ties; unsigned ones from 0); for bool about half True."""
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "b":
        return rng.random(size=shape) < 0.5
    if not is_float(dtype):  # (unsigned types: from 0)
        return rng.integers(0 if np.dtype(dtype).kind == "u" else -50, 51, size=shape).astype(dtype)
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
    kind = result_kind(op)
    if kind == "index":
        return np.dtype(np.int64)
    if want is not None:
        return np.dtype(want)
    if kind == "sum":
        return dt if is_float(dt) else np.dtype(np.uint64 if dt.kind == "u" else np.int64)  # NumPy's
    if kind == "mean":
        return dt if is_float(dt) else np.dtype(np.float64)
    assert kind == "value", f"{op}: no result type rule for tandem.op_info's result kind {kind!r}"
    return dt


def accumulated_input(x, want):
    """The input as dtype=want has it read: converted first where want is float64 or of the other kind
    (a float for an integer input, an integer for a float input), as NumPy converts each element."""
    if want is not None and (is_float(x.dtype) != is_float(want) or want == np.float64):
        return x.astype(want)
    return x


def numpy_call(op, x, axis, keepdims, want=None):
    """NumPy's own answer (sumsq: the sum of np.square), for its result type, shape and scalar-ness."""
    kw = {"dtype": want} if tandem.op_info[op]["dtype"] else {}
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return NUMPY_OPS[op](x, axis=axis, keepdims=keepdims, **kw)


@np.errstate(invalid="ignore", over="ignore")
def reference(op, x, axis, want=None):
    """(expected values with keepdims=True, error bound or None for exact) for reducing x along axis.
    Independent of tandem: long double sums, NumPy's min / max / argmin / argmax."""
    axes = normalize(axis, x.ndim)
    rdt = result_dtype(op, x.dtype, want)
    kind = result_kind(op)
    if kind == "value":
        return NUMPY_OPS[op](plain(x), axis=axes, keepdims=True), None
    if kind == "index":
        return NUMPY_OPS[op](plain(x), axis=axis, keepdims=True), None
    xr = accumulated_input(x, want)
    n = math.prod(x.shape[d] for d in axes)
    if op in PRODUCTS:
        return product_reference(op, xr, axes, rdt, n)
    if not is_float(rdt) or not is_float(xr.dtype) and kind != "mean":  # exact integer arithmetic
        xi = xr.astype(np.int64)
        total = np.sum(TERMS[op](xi), axis=axes, keepdims=True)
        if kind == "mean":  # NumPy: the sum in the result type, divided, cast back (toward zero)
            total = np.trunc(total / n)
        return total.astype(rdt), None
    w = wide(xr)
    terms = TERMS[op](w)
    ref = np.sum(terms, axis=axes, keepdims=True)
    magnitude = np.sum(np.abs(terms), axis=axes, keepdims=True)
    if kind == "mean":
        ref, magnitude = ref / n, magnitude / n
    # The accumulation: any order of n - 1 additions (and sumsq's products, mean's division) in the
    # compute type, float64 where the input (or an integer input of a float64 mean) is float64, else
    # float32; then one rounding to the result type.
    compute = np.float64 if xr.dtype == np.float64 or not is_float(xr.dtype) else np.float32
    eps_c = float(np.finfo(compute).eps)
    eps_r, tiny = float_info(rdt)
    acc = (n + 2) * eps_c * magnitude + eps_c * np.abs(ref)
    return ref, acc + eps_r * (np.abs(ref) + acc) + tiny


@np.errstate(invalid="ignore", over="ignore", under="ignore", divide="ignore")
def product_reference(op, xr, axes, rdt, n):
    """A product's (expected values with keepdims=True, bound): integers exactly, wrapping in 64 bits (NumPy's
    int64 / uint64 products); floats as the long double product, within n + 2 roundings of the compute type
    while no partial product of any order can overflow or underflow (the magnitudes above 1 and below 1
    multiplied apart stay inside the normal range), else any value, NaN too (an order may overflow and
    underflow, and an infinity times a zero is NaN)."""
    if not is_float(rdt) or not is_float(xr.dtype):
        wide_int = np.uint64 if rdt.kind == "u" else np.int64
        return np.prod(xr.astype(wide_int), axis=axes, keepdims=True, dtype=wide_int).astype(rdt), None
    w = wide(xr)
    ref = np.prod(w, axis=axes, keepdims=True)
    compute = np.float64 if xr.dtype == np.float64 else np.float32
    fi = np.finfo(compute)
    mag = np.abs(w)
    finite = np.isfinite(mag) & (mag != 0)
    logs = np.where(finite, np.log2(np.where(finite, mag, 1)), 0)
    up = np.sum(np.maximum(logs, 0), axis=axes, keepdims=True)
    down = np.sum(np.minimum(logs, 0), axis=axes, keepdims=True)
    in_range = (up + 1 < fi.maxexp) & (down - 1 > fi.minexp)
    eps_c = float(fi.eps)
    eps_r, tiny = float_info(rdt)
    acc = (n + 2) * eps_c * np.abs(ref)
    return ref, np.where(in_range, acc + eps_r * (np.abs(ref) + acc) + tiny, np.inf)


@np.errstate(invalid="ignore", over="ignore")
def check_values(op, got, ref, bound, rdt):
    got_w = wide(got)
    if bound is None:  # exact: the same values (NaN where NumPy's has NaN)
        want = np.asarray(ref).astype(rdt)
        same = np.array_equal(got_w, wide(want), equal_nan=True) if is_float(rdt) else np.array_equal(got, want)
        assert same, f"{op}: values {np.asarray(got)!r}, NumPy's {want!r}"
        return
    nan = np.isnan(ref)
    free = np.isinf(bound)  # (a product whose order may overflow and underflow: an infinity times a zero is NaN)
    assert ((np.isnan(got_w) == nan) | free).all(), \
        f"{op}: NaN where NumPy has none, or none where it has: {got!r} vs {ref!r}"
    # Infinities, and results beyond the result type's range (a float16 sum of squares): infinite.
    top = float(ml_dtypes.finfo(rdt).max if is_bf16(rdt) else np.finfo(rdt).max)
    inf = (np.isinf(ref) | (np.abs(ref) - bound > top * (1 + float_info(rdt)[0] / 2))) & ~free
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
        # No elements: an error without an identity (NumPy's too), and for a mean into an integer type (NumPy
        # casts its NaN to an arbitrary integer); a mean into a float type is NaN, as NumPy's.
        nan_rule = tandem.op_info[op]["empty"] == "nan"
        self.error = self.n == 0 and (op in NO_IDENTITY or nan_rule and not is_float(self.rdt))
        self.numpy = None
        if self.error:
            if not is_bf16(x.dtype) and not nan_rule:
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
    if e.n == 0 and tandem.op_info[op]["empty"] == "nan":  # NumPy's mean of nothing: NaN and a RuntimeWarning
        with pytest.warns(RuntimeWarning, match="empty"):
            got = getattr(eng, op)(x, **args)
    else:
        got = getattr(eng, op)(x, **args)
    if use_out:
        assert got is out, f"{op}: out= is returned"
    elif (e.full and not keepdims) or x.ndim == 0:  # NumPy's full reductions (and any of a 0-d input): scalars
        assert isinstance(got, np.generic), f"{op}: a NumPy scalar, got {type(got).__name__}"
        assert type(got) is rdt.type, f"{op}: {type(got).__name__}, expected {rdt.type.__name__}"
        assert e.numpy is None or not isinstance(e.numpy, np.ndarray)
    else:
        assert isinstance(got, np.ndarray), f"{op}: an array, got {type(got).__name__}"
        assert e.numpy is None or keepdims or isinstance(e.numpy, np.ndarray)
    assert got.dtype == rdt, f"{op}({x.dtype}, dtype={want}): result {got.dtype}, expected {rdt}"
    assert got.shape == shape, f"{op}: shape {got.shape}, expected {shape}"
    ref = np.reshape(e.ref, shape)
    bound = None if e.bound is None else np.reshape(e.bound, shape)
    check_values(op, got, ref, bound, rdt)


# ---------------------------------------------------------------------------------------------------
# Generating the cases


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


def shape_id(s):
    return "x".join(map(str, s)) if s else "0d"


# ---------------------------------------------------------------------------------------------------
# matmul's reference


# The element types matmul takes: those of the 'auto' matmul kernel of each backend here, in tandem.dtypes'
# order (bfloat16 where ml_dtypes is installed); the others are refused (test_conventions_errors.py).
MATMUL_DTYPE_NAMES = [n for n in tandem.dtypes if any(
    n in k["dtypes"] for b in BACKENDS for k in tandem.kernel_info(b)["matmul"] if k["name"] == "auto")]
MATMUL_DTYPES = [DTYPE_OF[n] for n in MATMUL_DTYPE_NAMES if DTYPE_OF[n] is not None]


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

