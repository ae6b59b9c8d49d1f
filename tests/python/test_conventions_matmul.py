"""NumPy's conventions for tandem.Engine.matmul: np.matmul's rules for every layout pair of a and b (C,
Fortran, transposed, strided, negative strides, broadcast), vectors, batches broadcasting and empty
operands, out= in C and Fortran order, alpha / beta and trans_a / trans_b, against np.matmul in long
double (numpy_conventions.matmul_reference)."""
import itertools
import os

import numpy as np
import pytest

from numpy_conventions import BACKENDS, MATMUL_DTYPES, Failures, check_matmul, layouts, shape_id, values, wide

MATMUL_SHAPES = [
    ((5, 3), (3, 4)), ((1, 1), (1, 1)), ((17, 9), (9, 33)),  # 2-D
    ((3,), (3, 4)), ((5, 3), (3,)), ((3,), (3,)),  # vectors: a row, a column, a dot product (0-d)
    ((7, 1, 5, 3), (2, 3, 4)), ((4, 5, 3), (4, 3, 2)), ((1, 5, 3), (6, 3, 2)), ((2, 5, 3), (3,)),
    ((3,), (2, 3, 4)), ((2, 1, 3), (3, 1)),  # batches broadcasting as np.matmul's
    ((3, 1, 5, 3), (1, 4, 3, 2)), ((2, 3, 4, 5, 3), (4, 3, 2)),  # two batch dimensions that do not merge
    ((2, 1, 3, 5, 3), (1, 4, 1, 3, 2)),  # three: copied to one run
    ((0, 3), (3, 4)), ((5, 3), (3, 0)), ((5, 0), (0, 4)), ((0, 5, 3), (3, 4)), ((0,), (0,)),  # empty
]


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


@pytest.mark.parametrize("b_type", [pytest.param(d, id=d.name) for d in MATMUL_DTYPES])
@pytest.mark.parametrize("a_type", [pytest.param(d, id=d.name) for d in MATMUL_DTYPES])
def test_matmul_mixed_types_promote_as_numpy(eng, a_type, b_type):
    """a and b of two element types: NumPy's promotion (np.result_type; the 16-bit types with float32 or
    with each other give float32), each operand converted to it, the product checked as that type's."""
    if a_type == b_type:
        pytest.skip("one type: test_matmul_like_numpy")
    a, b = values((5, 3), a_type, seed=1), values((3, 4), b_type, seed=2)
    try:
        want = np.result_type(a_type, b_type)
    except TypeError:  # (a NumPy / ml_dtypes without a promotion of bfloat16 and float16: float32, tandem's)
        want = np.dtype(np.float32)
    got = eng.matmul(a, b)
    assert got.dtype == want, f"{a_type} @ {b_type}: {got.dtype}, NumPy's {want}"
    check_matmul(got, a.astype(want), b.astype(want), want)
    out = np.zeros((5, 4), want)
    assert eng.matmul(a, b, out=out) is out
    check_matmul(out, a.astype(want), b.astype(want), want)


MIXED_PAIRS = [(a, b) for a in MATMUL_DTYPES for b in MATMUL_DTYPES
               if a != b and a.itemsize <= 4 and b.itemsize <= 4]


@pytest.mark.parametrize("a_type,b_type", [pytest.param(a, b, id=f"{a.name}-{b.name}") for a, b in MIXED_PAIRS])
def test_matmul_mixed_types_are_the_float_product(eng, a_type, b_type):
    """Two different types of float32, float16 and bfloat16: one mixed product (nothing converted by the
    module), defined as the float32 product of the converted operands: deterministic mode gives its bits, in
    every layout (transposed and strided views, broadcast batches, out= in Fortran order); otherwise its value."""
    rng = np.random.default_rng(7)
    cases = [((7, 5), (5, 9)), ((3, 6, 40), (40, 2)), ((2, 1, 6, 4), (3, 4, 5)), ((9,), (9, 4))]
    for shape_a, shape_b in cases:
        a = rng.standard_normal(shape_a).astype(a_type)
        b = rng.standard_normal(shape_b).astype(b_type)
        a32, b32 = a.astype(np.float32), b.astype(np.float32)
        for det in (False, True):
            got = eng.matmul(a, b, deterministic=det)
            assert got.dtype == np.float32
            want = eng.matmul(a32, b32, deterministic=det)
            if det:
                np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
            exact = np.matmul(a.astype(np.float64), b.astype(np.float64))
            np.testing.assert_allclose(got, exact, rtol=1e-5, atol=1e-5 * shape_a[-1])
    # Views read in place: a transposed A, a strided B, out= in Fortran order.
    a = rng.standard_normal((30, 20)).astype(a_type)
    b = rng.standard_normal((30, 50)).astype(b_type)[:, ::2]
    out = np.zeros((20, 25), np.float32, order="F")
    assert eng.matmul(a.T, b, out=out, deterministic=True) is out
    want = eng.matmul(np.ascontiguousarray(a.T, np.float32), np.ascontiguousarray(b, np.float32), deterministic=True)
    np.testing.assert_array_equal(out.view(np.uint32), want.view(np.uint32))


@pytest.mark.parametrize("trans_a", [False, True])
@pytest.mark.parametrize("a_type,b_type", [pytest.param(np.dtype(np.float32), np.dtype(np.float32), id="float32"),
                                           pytest.param(np.dtype(np.float64), np.dtype(np.float64), id="float64")]
                         + [pytest.param(a, b, id=f"{a.name}-{b.name}") for a, b in MIXED_PAIRS[:2]])
def test_matmul_grouped(eng, a_type, b_type, trans_a):
    """matmul_grouped: group g's rows of op(a) times b[g], each exactly matmul's product of that group alone."""
    rng = np.random.default_rng(11)
    sizes = [3, 0, 5, 1, 0, 8]
    m, k, n = sum(sizes), 7, 4
    a = rng.integers(-4, 5, (k, m) if trans_a else (m, k)).astype(a_type)
    b = rng.integers(-4, 5, (len(sizes), k, n)).astype(b_type)
    got = eng.matmul_grouped(a, b, sizes, trans_a=trans_a)
    op_a = a.T if trans_a else a
    want = np.zeros((m, n))
    r0 = 0
    for g, s in enumerate(sizes):
        want[r0:r0 + s] = op_a[r0:r0 + s].astype(np.float64) @ b[g].astype(np.float64)
        if s:
            one = eng.matmul(op_a[r0:r0 + s], b[g])
            np.testing.assert_array_equal(got[r0:r0 + s], one)
        r0 += s
    np.testing.assert_array_equal(got, want)
    # out= with alpha and beta; one b for every group
    out = np.ones((m, n), got.dtype)
    assert eng.matmul_grouped(a, b[0], sizes, out=out, trans_a=trans_a, alpha=2.0, beta=0.5) is out
    np.testing.assert_array_equal(out, 2.0 * (op_a.astype(np.float64) @ b[0].astype(np.float64)) + 0.5)
    with pytest.raises(ValueError, match="add up to 16 but"):
        eng.matmul_grouped(a, b, sizes[:-1] + [7], trans_a=trans_a)
    with pytest.raises(ValueError, match="6 matrices for 5 groups.*a 2-D b for one matrix shared"):
        eng.matmul_grouped(a, b, sizes[:-2] + [8], trans_a=trans_a)
    # out= in Fortran order, computed apart and copied into
    out = np.zeros((m, n), got.dtype, order="F")
    assert eng.matmul_grouped(a, b, sizes, out=out, trans_a=trans_a) is out
    np.testing.assert_array_equal(out, got)


def test_matmul_grouped_refusals(eng):
    """The whole call is checked before any group runs: out= of the wrong shape or type, out= over a, group
    sizes that are not non-negative integers; nothing is written then."""
    x = np.arange(32, dtype=np.float32).reshape(8, 4)
    b = np.ones((3, 4, 4), np.float32)
    with pytest.raises(ValueError, match="overlaps"):
        eng.matmul_grouped(x[:6], b, [2, 2, 2], out=x[2:])
    for rows in (5, 9):
        out = np.full((rows, 4), 7.0, np.float32)
        with pytest.raises(ValueError, match="shape"):
            eng.matmul_grouped(x[:6], b, [2, 2, 2], out=out)
        assert (out == 7.0).all()
    with pytest.raises(TypeError):
        eng.matmul_grouped(x[:6], b, [2, 2, 2], out=np.zeros((6, 4), np.float64))
    with pytest.raises(TypeError):
        eng.matmul_grouped(x[:6], b, [True, 2, 3])
    with pytest.raises(ValueError, match="out of range"):
        eng.matmul_grouped(x[:6], b, [2, -1, 5])
    with pytest.raises(ValueError, match="out of range"):
        eng.matmul_grouped(x[:6], b, [2**63, 2, 2])
    # NumPy integers and a nested list with trans_a are fine
    got = eng.matmul_grouped(x[:6].T.tolist(), b, np.array([2, 2, 2]), trans_a=True)
    np.testing.assert_array_equal(got, x[:6] @ np.ones((4, 4), np.float32))


@pytest.mark.parametrize("dtype", [np.dtype(np.float32), np.dtype(np.float64)], ids=lambda d: d.name)
def test_matmul_batch_dimensions_in_place(eng, dtype):
    """Batches whose strides merge into at most two dimensions are read in place (no copy of a or b: a
    broadcast of P a's over Q b's allocates only the result), and out= in a permuted layout is written in place;
    every entry against np.matmul in float64."""
    import tracemalloc
    rng = np.random.default_rng(5)
    P, Q, m, k, n = 6, 5, 40, 64, 3
    a = rng.integers(-3, 4, (P, 1, m, k)).astype(dtype)
    b = rng.integers(-3, 4, (1, Q, k, n)).astype(dtype)
    want = np.matmul(a.astype(np.float64), b.astype(np.float64))
    eng.matmul(a, b)  # (warm: the engine's own first-call allocations)
    tracemalloc.start()
    got = eng.matmul(a, b)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    np.testing.assert_array_equal(got, want)
    assert peak < got.nbytes + a.nbytes // 2, f"peak {peak} bytes: a or b was copied (result {got.nbytes})"
    # a permuted a (stored [P][m][Q][k], read as P x Q matrices) and out= stored [Q][m][P][n]
    ap = np.ascontiguousarray(rng.integers(-3, 4, (P, m, Q, k)).astype(dtype)).transpose(0, 2, 1, 3)
    bq = rng.integers(-3, 4, (Q, k, n)).astype(dtype)
    store = np.full((Q, m, P, n), 7, dtype)
    out = store.transpose(2, 0, 1, 3)
    assert eng.matmul(ap, bq, out=out, alpha=2.0, beta=-1.0) is out
    np.testing.assert_array_equal(out, 2 * np.matmul(ap.astype(np.float64), bq.astype(np.float64)) - 7)
    # the same with a transposed b (read as trans_b) and an a broadcast over P
    bt = np.swapaxes(rng.integers(-3, 4, (P, Q, n, k)).astype(dtype), -1, -2)
    a1 = rng.integers(-3, 4, (Q, m, k)).astype(dtype)
    np.testing.assert_array_equal(eng.matmul(a1, bt), np.matmul(a1.astype(np.float64), bt.astype(np.float64)))
