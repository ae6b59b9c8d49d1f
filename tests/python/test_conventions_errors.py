"""What tandem.Engine refuses and how it says so: each kernel of kernel_info() gives NumPy's answers for
the ops and element types it lists and refuses the others; each error is tandem's, of its kind (a
ValueError or TypeError too), names what was wrong and has no C++ in its message. And the version and
repr."""
import pathlib
import re

import numpy as np
import pytest

import tandem
from numpy_conventions import (CXX_WORDS, DTYPE_OF, DTYPES, MATMUL_DTYPE_NAMES, Failures, check_matmul,
                               check_reduction, values)

# ---------------------------------------------------------------------------------------------------
# Kernels


def kernel_dtypes(k):
    """The NumPy dtypes of the element types kernel k lists (bfloat16 where ml_dtypes is installed)."""
    return [DTYPE_OF[n] for n in k["dtypes"] if DTYPE_OF.get(n) is not None]


def check_does_not_run(failures, k, call):
    """A kernel this device cannot run (runs_here False): any call raises tandem.Error naming what it needs
    (k['requirement']), in Python's words."""
    with failures.case(f"kernel {k['name']!r}, which does not run here, refused"):
        with pytest.raises(tandem.Error) as e:
            call()
        msg = str(e.value)
        assert k["requirement"] and k["requirement"] in msg, f"the message names {k['requirement']!r}: {msg}"
        assert not any(w in msg for w in CXX_WORDS), msg


def test_every_kernel(eng):
    """Each kernel of eng.kernel_info() that runs here (runs_here) gives NumPy's answers for the ops and
    element types it lists and refuses the other types of tandem.dtypes (tandem.TypeError); a reduce kernel
    along an axis where it runs per row / column, else a tandem.ValueError; a matmul kernel for each type it
    computes in full precision (precisions). A kernel that does not run here raises tandem.Error for each op
    and type it lists."""
    failures = Failures()
    for k in eng.kernel_info()["reduce"]:
        if not k["runs_here"]:
            for op in k["ops"]:
                for dtype in kernel_dtypes(k):
                    check_does_not_run(failures, k, lambda: getattr(eng, op)(values((7,), dtype), kernel=k["name"]))
            continue
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
        for dtype in DTYPES:
            if dtype is None:
                continue
            a, b = values((37, 19), dtype, seed=1), values((19, 23), dtype, seed=2)
            if not k["runs_here"]:
                if dtype.name in k["dtypes"]:
                    check_does_not_run(failures, k, lambda: eng.matmul(a, b, kernel=k["name"]))
                continue
            name = f"matmul(<{dtype} (37, 19)>, <(19, 23)>, kernel={k['name']!r})"
            if dtype.name not in k["dtypes"]:  # a type it does not take: tandem.TypeError
                with failures.case(name + " refused"):
                    with pytest.raises(tandem.TypeError) as e:
                        eng.matmul(a, b, kernel=k["name"])
                    assert dtype.name in str(e.value) and not any(w in str(e.value) for w in CXX_WORDS), str(e.value)
                continue
            if k["precisions"][dtype.name] != "full":
                continue  # (inputs rounded to tf32 or bf16: not within the bound of a full-precision product)
            with failures.case(name):
                rdt = np.dtype(np.float64) if dtype == np.float64 else np.dtype(np.float32)
                check_matmul(eng.matmul(a, b, kernel=k["name"]), a, b, rdt)
    failures.check()


# ---------------------------------------------------------------------------------------------------
# Errors


def error_cases():
    """(name, call, expected tandem exception, text the message must hold)."""
    f32 = np.zeros((5, 3), np.float32)
    a2 = np.arange(6.0).reshape(2, 3)
    non_det = [k["name"] for k in tandem.Engine("cpu").kernel_info()["reduce"] if not k["deterministic"]]
    cpu = tandem.Engine("cpu")
    sq = np.ones((3, 3))
    return [
        ("Engine('gpu')", lambda e: tandem.Engine("gpu"), tandem.ValueError, "gpu"),
        ("unknown kernel", lambda e: e.sum(a2, kernel="nope"), tandem.ValueError, "nope"),
        ("CUDA kernel on the CPU", lambda e: cpu.sum(a2, kernel="warp_shuffle"), tandem.ValueError, "warp_shuffle"),
        ("deterministic with a non-deterministic kernel", lambda e: e.sum(a2, kernel=non_det[0], deterministic=True),
         tandem.ValueError, non_det[0]),
        ("unknown matmul kernel", lambda e: e.matmul(f32, f32.T, kernel="nope"), tandem.ValueError, "nope"),
        ("empty min", lambda e: e.min(np.zeros((0, 3))), tandem.ValueError, "(0, 3)"),
        ("empty argmax along an axis", lambda e: e.argmax(np.zeros((0, 3)), axis=0), tandem.ValueError, "(0, 3)"),
        ("empty mean with an integer dtype=", lambda e: e.mean(np.zeros((3, 0)), axis=1, dtype=np.int64),
         tandem.ValueError, "(3, 0)"),
        ("axis out of range", lambda e: e.sum(a2, axis=2), tandem.AxisError, "2"),
        ("negative axis out of range", lambda e: e.sum(a2, axis=-3), tandem.AxisError, "-3"),
        ("axis of a 0-d array", lambda e: e.sum(np.array(1.0), axis=1), tandem.AxisError, "1"),
        ("axis in a tuple out of range", lambda e: e.max(a2, axis=(0, 2)), tandem.AxisError, "2"),
        ("repeated axis", lambda e: e.sum(a2, axis=(0, 0)), tandem.ValueError, "0"),
        ("repeated axis, negative", lambda e: e.sum(a2, axis=(1, -1)), tandem.ValueError, "axis"),
        ("axis a string", lambda e: e.sum(a2, axis="row"), tandem.TypeError, "axis"),
        ("axis a float", lambda e: e.sum(a2, axis=1.5), tandem.TypeError, "axis"),
        ("axis True", lambda e: e.sum(a2, axis=True), tandem.TypeError, "axis"),
        ("axis tuple with a float", lambda e: e.sum(a2, axis=(0, 1.0)), tandem.TypeError, "axis"),
        ("axis an array of one int", lambda e: e.sum(a2, axis=np.array([1])), tandem.TypeError, "ndarray"),
        ("axis an array of floats", lambda e: e.max(a2, axis=np.array([0.5])), tandem.TypeError, "ndarray"),
        ("axis an empty array", lambda e: e.argmax(a2, axis=np.array([], np.int64)), tandem.TypeError, "ndarray"),
        ("axis a 2-d array, 0-d input", lambda e: e.mean(np.array(1.0), axis=np.array([[0]])), tandem.TypeError,
         "ndarray"),
        ("axis past int64", lambda e: e.sum(a2, axis=2**70), tandem.AxisError, str(2**70)),
        ("argmin with a tuple", lambda e: e.argmin(a2, axis=(0,)), tandem.TypeError, "tuple"),
        ("argmax with a tuple", lambda e: e.argmax(a2, axis=(0, 1)), tandem.TypeError, "tuple"),
        ("complex64 array", lambda e: e.sum(np.zeros(3, np.complex64)), tandem.TypeError, "complex64"),
        ("object array", lambda e: e.sum(np.array([1, "a"], dtype=object)), tandem.TypeError, "object"),
        ("string array", lambda e: e.sum(np.array(["a", "b"])), tandem.TypeError, "float32"),
        ("sum of a mask into a bool out=", lambda e: e.sum(np.zeros((2, 3), np.bool_), axis=0, out=np.zeros(3, np.bool_)),
         tandem.TypeError, "out= holds bool"),
        ("mean of a mask, dtype=bool", lambda e: e.mean(np.zeros(3, np.bool_), dtype=np.bool_), tandem.TypeError,
         "dtype=bool"),
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
        ("matmul of an int32 b", lambda e: e.matmul(f32, np.zeros((3, 4), np.int32)), tandem.TypeError, "int32"),
    ] + [  # each element type of tandem.dtypes that matmul does not take
        (f"matmul {name}", lambda e, d=d: e.matmul(np.zeros((2, 2), d), np.zeros((2, 2), d)), tandem.TypeError, name)
        for name, d in DTYPE_OF.items() if name not in MATMUL_DTYPE_NAMES and d is not None
    ] + [
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
        # Arguments pybind11 would refuse with its C++ signature and the array's repr: Python's words instead.
        ("NumPy's where= on argmin", lambda e: e.argmin(a2, where=True), tandem.TypeError,
         "unexpected keyword argument 'where'"),
        ("initial= of mean (NumPy's has none)", lambda e: e.mean(a2, initial=0.0), tandem.TypeError, "'initial'"),
        ("initial= an array", lambda e: e.max(a2, initial=np.zeros(2)), tandem.TypeError, "initial="),
        ("initial= a str", lambda e: e.sum(a2, initial="0"), tandem.TypeError, "initial="),
        ("an unknown keyword", lambda e: e.mean(a2, axes=1), tandem.TypeError, "'axes'"),
        ("dtype= of min", lambda e: e.min(a2, dtype=np.float64), tandem.TypeError, "'dtype'"),
        ("too many positional", lambda e: e.sum(a2, 0, None, None, False, 0, "auto"), tandem.TypeError, "positional"),
        ("axis given twice", lambda e: e.sum(a2, 0, axis=1), tandem.TypeError, "'axis'"),
        ("no array", lambda e: e.sum(), tandem.TypeError, "'x'"),
        ("keepdims a str", lambda e: e.sum(a2, keepdims="yes"), tandem.TypeError, "keepdims="),
        ("kernel an int", lambda e: e.sum(a2, kernel=3), tandem.TypeError, "kernel="),
        ("deterministic None", lambda e: e.argmax(a2, deterministic=None), tandem.TypeError, "deterministic="),
        ("dtype=bool", lambda e: e.sum(a2, dtype=np.bool_), tandem.TypeError, "dtype=bool"),
        ("matmul unknown keyword", lambda e: e.matmul(f32, f32.T, transpose=True), tandem.TypeError, "'transpose'"),
        ("matmul alpha a str", lambda e: e.matmul(f32, f32.T, alpha="2"), tandem.TypeError, "alpha="),
        ("matmul beta an array", lambda e: e.matmul(f32, f32.T, beta=np.ones(2)), tandem.TypeError, "beta="),
        ("matmul alpha infinite", lambda e: e.matmul(f32, f32.T, alpha=float("inf")), tandem.ValueError, "alpha=inf"),
        ("matmul out over a", lambda e: e.matmul(sq, np.ones((3, 3)), out=sq), tandem.ValueError, "out overlaps a or b"),
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
    for word in ("C is", "op(A)", "op(B)", "double", "Dtype", "Op::", "incompatible function arguments", "C overlaps"):
        assert word not in msg, f"{name}: {word!r} in {msg!r}"


def test_error_classes():
    assert issubclass(tandem.Error, RuntimeError)
    assert issubclass(tandem.ValueError, tandem.Error) and issubclass(tandem.ValueError, ValueError)
    assert issubclass(tandem.TypeError, tandem.Error) and issubclass(tandem.TypeError, TypeError)
    assert not issubclass(tandem.ValueError, TypeError) and not issubclass(tandem.TypeError, ValueError)
    # An axis out of range is NumPy's AxisError too (numpy.exceptions.AxisError; numpy.AxisError before 1.25).
    numpy_axis_error = getattr(getattr(np, "exceptions", np), "AxisError", None) or np.AxisError
    assert issubclass(tandem.AxisError, tandem.ValueError) and issubclass(tandem.AxisError, numpy_axis_error)
    assert issubclass(tandem.AxisError, IndexError)


def test_axis_error_caught_as_numpy_does(eng):
    """Code written for NumPy's AxisError catches tandem's, with tandem's message."""
    numpy_axis_error = getattr(getattr(np, "exceptions", np), "AxisError", None) or np.AxisError
    x = np.zeros((2, 3))
    for call in (lambda: eng.sum(x, axis=2), lambda: eng.argmax(x, axis=-3), lambda: eng.mean(x, axis=(0, 5))):
        with pytest.raises(numpy_axis_error) as e:
            call()
        assert "out of bounds for an array of dimension 2" in str(e.value)


# ---------------------------------------------------------------------------------------------------
# Version and repr


def test_version_and_repr():
    cmake = (pathlib.Path(__file__).parents[2] / "CMakeLists.txt").read_text()
    version = re.search(r"project\(\s*tandem\s+VERSION\s+([0-9]+\.[0-9]+\.[0-9]+)", cmake).group(1)
    assert isinstance(tandem.__version__, str) and tandem.__version__ == version
    assert repr(tandem.Engine("cpu")) == "tandem.Engine('cpu')"
    assert tandem.__version__ in tandem.info().splitlines()[0]
