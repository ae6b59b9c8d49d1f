"""Every layout NumPy makes reaches the right answer: broadcast (stride-0) views, bytes in the other order,
negative and unaligned strides, 0-d arrays, read-only inputs, and the outputs tandem must refuse rather
than write wrongly. A Hypothesis property test draws arrays of every element type, shape and view of the
tables and compares every op and axis with NumPy (test_numpy.numpy_result, the independent reference)."""
import decimal
import fractions
import math
import os
import tracemalloc

import numpy as np
import pytest

import tandem
from test_numpy import BACKENDS, DTYPES, OPS, canonical_sum, check, numpy_result, values


@pytest.fixture(params=BACKENDS, scope="module")
def eng(request):
    return tandem.Engine(request.param)


def test_broadcast_views(eng):
    # A stride of 0 repeats one element: each must be counted (it once read past the array: nan, a crash).
    x = np.broadcast_to(np.float32(2), (1000,))
    for op in OPS:
        check(op, getattr(eng, op)(x), numpy_result(op, x), x)
    y = np.lib.stride_tricks.as_strided(np.arange(3.0), shape=(10,), strides=(8 * 0,))
    assert eng.sum(y) == 0.0 and eng.max(y) == 0.0
    z = np.lib.stride_tricks.as_strided(np.arange(1.0, 4.0), shape=(7,), strides=(0,))
    assert eng.sum(z) == 7.0
    rows = np.broadcast_to(np.arange(5.0), (4, 5))  # rows repeated (stride 0 between rows)
    cols = np.broadcast_to(np.arange(4.0)[:, None], (4, 5))  # columns repeated
    for m in (rows, cols):
        for op in OPS:
            check(op, getattr(eng, op)(m), numpy_result(op, m), m)
            for axis in (0, 1):
                check(op, getattr(eng, op)(m, axis=axis), numpy_result(op, m, axis), m, axis)
    a = np.broadcast_to(np.arange(6.0).reshape(2, 3), (4, 2, 3))  # one A for every entry of a batch
    b = np.ones((4, 3, 2))
    np.testing.assert_allclose(eng.matmul(a, b), np.matmul(a, b))
    np.testing.assert_allclose(eng.matmul(rows, np.ones((5, 2))), rows @ np.ones((5, 2)))


def test_full_reductions_of_broadcasts(eng):
    # A full reduction of a broadcast whose elements are not one run: NumPy's answer for every op and type,
    # the index of an element's first repeat for argmin / argmax (ties included), and in deterministic mode
    # the bits of the same values copied.
    for dt in DTYPES:
        base = values((3, 1, 4), dt, seed=5)
        base[2, 0, 1] = base[1, 0, 3] = base.max()  # ties: the first of equal values wins
        base[0, 0, 2] = base.min()
        for x in (np.broadcast_to(base, (3, 5, 4)), np.broadcast_to(base[:, :, :1], (3, 5, 4)),
                  np.broadcast_to(base, (2, 3, 5, 4)), np.broadcast_to(base[::-1, :, ::2], (3, 5, 2))):
            for op in OPS:
                check(op, getattr(eng, op)(x), numpy_result(op, x), x)
                if op not in ("argmin", "argmax"):
                    got, want = getattr(eng, op)(x, deterministic=True), getattr(eng, op)(x.copy(), deterministic=True)
                    assert np.asarray(got).tobytes() == np.asarray(want).tobytes(), (op, dt, x.strides)
                if op in ("sum", "sumsq", "mean", "prod") and np.dtype(dt).kind in "iub":  # exact in either mode
                    got, want = getattr(eng, op)(x), getattr(eng, op)(x.copy())
                    assert np.asarray(got).tobytes() == np.asarray(want).tobytes(), (op, dt, x.strides)
            got = eng.sum(x, keepdims=True)
            assert got.shape == (1,) * x.ndim and np.asarray(got).dtype == np.asarray(eng.sum(x)).dtype
    # Deterministic float reductions of broadcasts read a piece at a time: chunks of 4096 elements exactly
    # (8192, 3 x 2^20 + 4096: whole pieces), one chunk and a bit, and the special values (a sum of only -0.0
    # is -0.0; NaN and the infinities as in one array).
    for dt in (np.float32, np.float64, np.float16):
        for row in ([-0.0, -0.0], [1.5, np.nan], [np.inf, -0.25], [np.inf, -np.inf], [3.0, -1.0]):
            for n in (4096, 2049, 3 * 2**19 + 2048):
                x = np.broadcast_to(np.array(row, dt), (n, 2))
                for op in ("sum", "mean", "sumsq", "prod"):
                    got, want = getattr(eng, op)(x, deterministic=True), getattr(eng, op)(x.copy(), deterministic=True)
                    assert np.asarray(got).tobytes() == np.asarray(want).tobytes(), (op, dt, row, n)
    # An integer mean is the exact sum rounded to float64 once, then divided: past 2^53 (and past 2^64) the
    # distinct elements' own mean is not the broadcast's; the broadcast's exact sum, rounded once, is.
    for row, dt in (([2**53 + 1, 0], np.int64), ([2**62 + 12345, -(2**61) + 7, 2**63 - 1], np.int64),
                    ([-(2**63), -(2**63) + 1, -5], np.int64), ([2**64 - 1, 2**63 + 5, 3], np.uint64),
                    ([2**63 - 1, -1, 2**40 + 3], np.int64)):
        for n in (3, 1025, 2**20 + 1):
            x = np.broadcast_to(np.array(row, dt), (n, len(row)))
            want = float(sum(row) * n) / (n * len(row))  # (Python: the exact sum rounded once, ties to even)
            for det in (False, True):
                assert eng.mean(x, deterministic=det) == want, (row, n, det)
            if n == 1025:
                assert eng.mean(x, deterministic=True) == eng.mean(x.copy(), deterministic=True), (row, n)


@pytest.mark.parametrize("order", [">", "<"])
def test_byte_order(eng, order):
    for dt in DTYPES:
        x = values(37, dt, seed=4)
        other = x.astype(x.dtype.newbyteorder(order))  # the same values, bytes in either order
        for op in OPS:
            check(op, getattr(eng, op)(other), numpy_result(op, x), x)
    for dt in (np.float32, np.float64):
        a, b = values((5, 3), dt), values((3, 4), dt)
        want = a.astype(np.float64) @ b
        np.testing.assert_allclose(eng.matmul(a.astype(a.dtype.newbyteorder(order)), b), want, rtol=1e-5)
    if np.dtype(np.float32).newbyteorder(order).isnative:
        return
    with pytest.raises(tandem.Error, match="order"):  # an output is never converted: refused
        eng.matmul(a, b, out=np.zeros((5, 4), np.dtype(np.float64).newbyteorder(order)))


def repeated_canonical_sum(v, n):
    """test_numpy.canonical_sum of n copies of v without making them: each level is some copies of one
    value followed by at most one other (the last, shorter chunk's), so each level's full chunks share
    one value."""
    t = type(v)
    same, k, tail = v, n, []
    while k + len(tail) > 4096:
        full = canonical_sum(np.full(4096, same, dtype=t))
        rest = [same] * (k % 4096) + tail
        same, k, tail = full, k // 4096, [canonical_sum(np.array(rest, dtype=t))] if rest else []
    return canonical_sum(np.array([same] * k + tail, dtype=t))


def traced_peak(calls):
    """The results of calls() and the peak of the memory Python's allocators (NumPy's too) held meanwhile."""
    tracemalloc.start()
    try:
        got = calls()
        return got, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_broadcasts_are_read_in_place(eng):
    # A broadcast is read where it lies, never copied: a reduced stride-0 axis reads its one element (or row)
    # as often as it repeats, a kept one repeats the results, a full reduction reads the distinct elements.
    # tracemalloc sees NumPy's allocations; a copy of these would take 117 MB or more, a result 16 MB at most.
    b = np.broadcast_to(values(7, np.float32, seed=9), (2**22, 7))
    s = np.broadcast_to(np.float64(-2.5), (3000, 5000))
    c = np.broadcast_to(np.arange(-3, 4, dtype=np.int64)[:, None], (7, 2**22))  # columns repeated
    got, peak = traced_peak(lambda: [eng.sum(b, axis=0), eng.max(b.T, axis=1), eng.sum(b, axis=1),
                                     eng.argmax(s, axis=0), eng.mean(s, axis=1), eng.sum(s), eng.min(b[:, 3]),
                                     eng.sum(b), eng.argmin(b.T), eng.mean(c)])
    assert peak < 20 * 2**20, peak
    want = [np.sum(b, axis=0), np.max(b.T, axis=1), np.sum(b, axis=1), np.argmax(s, axis=0), np.mean(s, axis=1),
            np.sum(s), np.min(b[:, 3]), np.sum(b, dtype=np.float64), np.argmin(b.T), np.mean(c)]
    ops = ["sum", "max", "sum", "argmax", "mean", "sum", "min", "sum", "argmin", "mean"]
    for op, g, w, x in zip(ops, got, want, [b, b, b, s, s, s, b, b, b, c]):
        check(op, g, w, x)
    # Integer products (modulo 2^64) and means (exact), unsigned sums and float products outside deterministic
    # mode of a broadcast read its distinct elements too (a copy of these: 235 MB each).
    ints, uints = np.array([3, -5, 7, 1, -1, 9, 11], np.int64), np.array([2**64 - 3, 5, 2**63, 1, 7, 2, 3], np.uint64)
    floats = np.array([1.0000001, 0.9999999, -1.0, 1.25, 0.8, 1.0, -1.0], np.float64)
    bi, bu, bf = (np.broadcast_to(v, (2**22, 7)) for v in (ints, uints, floats))
    got, peak = traced_peak(
        lambda: [eng.prod(bi), eng.prod(bu), eng.sum(bu), eng.mean(bi, deterministic=True), eng.mean(bu), eng.prod(bf)])
    assert peak < 20 * 2**20, peak
    k, n = 2**22, 7 * 2**22
    prod_i, prod_u = math.prod(int(v) for v in ints), math.prod(int(v) for v in uints)
    assert int(got[0]) == np.uint64(pow(prod_i, k, 2**64)).astype(np.int64)  # (the same bits, as int64)
    assert int(got[1]) == pow(prod_u, k, 2**64) and int(got[2]) == sum(int(v) for v in uints) * k % 2**64
    assert got[3] == float(int(ints.sum()) * k) / n and got[4] == float(sum(int(v) for v in uints) * k) / n
    exact = math.prod(fractions.Fraction(v) for v in floats.tolist())  # (the 7 values' product, exactly)
    with decimal.localcontext() as c:
        c.prec = 50
        want = float((decimal.Decimal(exact.numerator) / decimal.Decimal(exact.denominator)) ** k)
    assert abs(float(got[5]) - want) <= (n + 8) * 2.0**-53 * abs(want), (float(got[5]), want)
    # Deterministic float sums, means, sums of squares and products of a broadcast that is not one run follow
    # every element in the canonical order: read a piece at a time (tracemalloc sees no 117 MB copy), with the
    # bits of the same elements copied (29 pieces of at most 2^20 elements, the last a 21-element chunk).
    odd = np.broadcast_to(values(7, np.float32, seed=9), (2**22 + 3, 7))
    det_ops = ["sum", "mean", "sumsq", "prod"]
    got, peak = traced_peak(lambda: [getattr(eng, op)(odd, deterministic=True) for op in det_ops])
    assert peak < 20 * 2**20, peak
    flat = odd.copy()
    for op, g in zip(det_ops, got):
        assert np.asarray(g).tobytes() == np.asarray(getattr(eng, op)(flat, deterministic=True)).tobytes(), op
    del flat
    # Past 2^31 elements: the one element read 2^31 + 5 times (a copy would be 8 GiB).
    n = 2**31 + 5
    big = np.broadcast_to(np.float32(0.75), (n,))
    assert eng.sum(big, deterministic=True) == repeated_canonical_sum(np.float32(0.75), n)
    assert abs(float(eng.sum(big)) - 0.75 * n) <= (n + 8) * 2.0**-24 * 0.75 * n
    assert eng.argmin(big) == 0 and eng.max(big) == np.float32(0.75) and eng.mean(big) == 0.75


def test_moments_and_casts_of_broadcasts(eng):
    # var / std cast a broadcast and subtract its mean as its distinct elements, broadcast again, and dtype=
    # converts only the distinct elements: no temporary of the broadcast's size (tracemalloc, each call: a
    # copy of these takes 67 MB or more; the largest result here is 4 MB), with the bits of the same elements
    # in one array in deterministic mode and NumPy's float64 value within the result type's bound otherwise.
    for dt in (np.float32, np.int32, np.float16):
        b = np.broadcast_to(values(64, dt, seed=11), (2**19, 64))
        flat = np.ascontiguousarray(b)
        for axis in (None, 0, 1):
            for det in (False, True):
                calls = [lambda: eng.var(b, axis=axis, deterministic=det),
                         lambda: eng.std(b, axis=axis, ddof=1, deterministic=det),
                         lambda: eng.mean(b, axis=axis, dtype=np.float64, deterministic=det),
                         lambda: eng.sum(b, axis=axis, dtype=np.float64, deterministic=det)]
                got = []
                for k, call in enumerate(calls):
                    g, peak = traced_peak(call)
                    assert peak < 24 * 2**20, (dt, axis, det, k, peak)
                    got.append(g)
                if det:  # (the same elements in one array)
                    want = [eng.var(flat, axis=axis, deterministic=True),
                            eng.std(flat, axis=axis, ddof=1, deterministic=True),
                            eng.mean(flat, axis=axis, dtype=np.float64, deterministic=True),
                            eng.sum(flat, axis=axis, dtype=np.float64, deterministic=True)]
                    for k, (g, w) in enumerate(zip(got, want)):
                        assert np.asarray(g).tobytes() == np.asarray(w).tobytes(), (dt, axis, k)
                    continue
                wide = flat.astype(np.float64)  # (NumPy in float64)
                want = [np.var(wide, axis=axis), np.std(wide, axis=axis, ddof=1), np.mean(wide, axis=axis),
                        np.sum(wide, axis=axis)]
                rtol = 1e-9 if dt == np.int32 else 1e-4 if dt == np.float32 else 2e-3
                for k, (g, w) in enumerate(zip(got, want)):
                    np.testing.assert_allclose(np.asarray(g, np.float64), w, rtol=1e-9 if k > 1 else rtol,
                                               err_msg=str((dt, axis, k)))


def test_masks_of_broadcasts(eng):
    # where= on a broadcast with a mask that repeats along the same axis selects the first elements there and
    # broadcasts the selection again (tracemalloc: a selection of the whole takes 117 MB), with NumPy's value
    # and, deterministic, the bits of the same elements and mask in one array.
    x = np.broadcast_to(values(7, np.float32, seed=5), (2**22, 7))
    keep = np.broadcast_to(np.array([True, False, True, True, False, True, True]), (2**22, 7))
    for op, kw in (("sum", {}), ("mean", {}), ("max", {"initial": -np.inf}), ("sum", {"axis": 0}),
                   ("mean", {"axis": 0}), ("var", {})):
        for det in (False, True):
            got, peak = traced_peak(lambda: getattr(eng, op)(x, where=keep, deterministic=det, **kw))
            assert peak < 20 * 2**20, (op, kw, det, peak)
            if det:
                want = getattr(eng, op)(np.ascontiguousarray(x), where=np.ascontiguousarray(keep), deterministic=True,
                                        **kw)
                assert np.asarray(got).tobytes() == np.asarray(want).tobytes(), (op, kw)
            else:
                wide = getattr(np, op)(x.astype(np.float64), where=keep, **kw)
                np.testing.assert_allclose(np.asarray(got, np.float64), wide, rtol=1e-4, err_msg=str((op, kw)))
    # A mask that varies along an axis the input repeats: each index of a kept one has its own mean.
    x = np.broadcast_to(np.arange(4.0), (3, 4))
    m = np.array([[1, 1, 1, 1], [1, 1, 0, 0], [1, 0, 0, 0]], bool)
    for axis in (1, None):
        for op in ("var", "std", "mean", "sum"):
            for det in (False, True):
                got = getattr(eng, op)(x, axis=axis, where=m, deterministic=det)
                np.testing.assert_allclose(got, getattr(np, op)(x, axis=axis, where=m), rtol=1e-15, atol=0)
                want = getattr(eng, op)(np.ascontiguousarray(x), axis=axis, where=m, deterministic=det)
                assert np.asarray(got).tobytes() == np.asarray(want).tobytes(), (op, axis, det)


def test_reduced_axes_of_broadcasts(eng):
    # Reductions over several axes, some of them repeats (stride 0) the matrix plan cannot read as one matrix:
    # one repeat is read where the result over the repeats follows from it (min, max; integer sums, sums of
    # squares and products, modulo 2^64; float ones and float means outside deterministic mode), no copy of
    # the broadcast (tracemalloc: a copy would be 63 MB or more); NumPy's answer on the same values.
    rng = np.random.default_rng(8)
    near_one = 1 + rng.uniform(-2e-6, 2e-6, (3, 5))  # (products of 2^19 repeats neither overflow nor vanish)
    cases = [(np.float64, near_one), (np.float32, near_one), (np.float64, rng.uniform(-2, 2, (3, 5))),
             (np.int64, rng.integers(-2**62, 2**62, (3, 5))), (np.uint64, rng.integers(0, 2**64, (3, 5), np.uint64)),
             (np.int32, rng.integers(-9, 9, (3, 5))), (np.bool_, rng.uniform(size=(3, 5)) < 0.5)]
    for dt, base in cases:
        x = np.broadcast_to(np.asarray(base, dt), (2**19 + 3, 3, 5))
        ops = ["min", "max", "sum", "sumsq", "prod"] + (["mean"] if np.issubdtype(dt, np.floating) else [])
        for axis in ((0, 1), (0, 2)):
            got, peak = traced_peak(lambda: [getattr(eng, op)(x, axis=axis) for op in ops])
            assert peak < 4 * 2**20, (dt, axis, peak)
            for op, g in zip(ops, got):
                if op == "prod" and np.issubdtype(dt, np.floating):  # (3 values' product to the repeats' power)
                    n = 2**19 + 3
                    w = np.prod(np.asarray(base, dt).astype(np.float64), axis=tuple(a - 1 for a in axis if a))
                    w = (w**n).astype(dt).astype(np.float64)  # (the result's type: 0 and inf as it rounds them)
                    rtol = 2 * (3 * n + 8) * float(np.finfo(dt).eps) / 2
                    np.testing.assert_allclose(np.asarray(g, np.float64), w, rtol=rtol, err_msg=str((dt, axis)))
                else:
                    check(op, g, numpy_result(op, x, axis=axis), x, axis=axis)
            # deterministic mode, and integer means: every element read, copied a block of results at a time
            # (at most 2^22 elements: under half of a copy of the broadcast here), with the bits of one array
            for op in ("sum", "mean"):
                for det in (True, False) if op == "mean" else (True,):
                    got, peak = traced_peak(lambda: getattr(eng, op)(x, axis=axis, deterministic=det))
                    want = getattr(eng, op)(np.ascontiguousarray(x), axis=axis, deterministic=det)
                    if det or not np.issubdtype(dt, np.floating):
                        assert np.asarray(got).tobytes() == np.asarray(want).tobytes(), (op, dt, axis, det)
                        assert peak < x.size * x.itemsize / 2 + 2**20, (op, dt, axis, det, peak)
    # One result's elements alone past a block (3 * (2^21 + 1) > 2^22): each result a full reduction, which reads
    # the broadcast a piece at a time (a copy: 126 MB and more), with the bits of one array.
    for base in (values(15, np.float32, seed=3), np.arange(2**62, 2**62 + 15, dtype=np.int64)):
        big = np.broadcast_to(base.reshape(3, 5), (2**21 + 1, 3, 5))
        for op in ("sum", "mean"):
            got, peak = traced_peak(lambda: getattr(eng, op)(big, axis=(0, 1), deterministic=True))
            assert peak < 20 * 2**20, (op, big.dtype, peak)
            want = getattr(eng, op)(np.ascontiguousarray(big), axis=(0, 1), deterministic=True)
            assert np.asarray(got).tobytes() == np.asarray(want).tobytes(), (op, big.dtype)
    # keepdims and out= as for any reduction
    x = np.broadcast_to(np.arange(15, dtype=np.int64).reshape(3, 5), (7, 3, 5))
    out = np.zeros((1, 1, 5), np.int64)
    assert eng.sum(x, axis=(0, 1), keepdims=True, out=out) is out
    np.testing.assert_array_equal(out, np.sum(x, axis=(0, 1), keepdims=True))


def test_other_views(eng):
    x = values(1001, np.float64, seed=2)
    for v in (x[::-1], x[::-7], x[5:900:3]):
        for op in OPS:
            check(op, getattr(eng, op)(v), numpy_result(op, v), v)
    raw = np.zeros(8 * 100 + 1, np.uint8)[1:].view(np.float64)  # misaligned to its element size
    raw[:] = x[:100]
    for op in OPS:
        check(op, getattr(eng, op)(raw), numpy_result(op, x[:100]), x[:100])
    zero_d = np.array(2.5)
    for op in OPS:
        check(op, getattr(eng, op)(zero_d), numpy_result(op, zero_d), zero_d)
    ro = values((6, 7), np.float32)
    ro.setflags(write=False)
    check("sum", eng.sum(ro, axis=0), numpy_result("sum", ro, 0), ro, 0)
    assert eng.sum([1.0, 2.0, 3.0]) == 6.0  # anything numpy.asarray takes


def test_outputs_refused_or_written_right(eng):
    a, b = values((5, 3), np.float32), values((3, 4), np.float32)
    wide = np.zeros(5 * 4 * 2, np.float32)
    repeated = np.lib.stride_tricks.as_strided(wide, shape=(5, 4), strides=(0, 4))
    with pytest.raises(tandem.Error, match="repeats"):
        eng.matmul(a, b, out=repeated)
    ro = np.zeros((5, 4), np.float32)
    ro.setflags(write=False)
    with pytest.raises(tandem.Error, match="read-only"):
        eng.matmul(a, b, out=ro)
    assert not wide.any()
    backwards = np.zeros((5, 4), np.float32)[::-1]  # (NumPy's rule: any layout; written through a copy)
    assert eng.matmul(a, b, out=backwards) is backwards
    np.testing.assert_allclose(backwards, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-5)


try:  # (the tests above run without Hypothesis; the property test below needs it)
    from hypothesis import given, settings
    from hypothesis import strategies as st
    from hypothesis.extra import numpy as hnp
    have_hypothesis = True
except ImportError:
    have_hypothesis = False

if not have_hypothesis:

    @pytest.mark.skip(reason="the property test needs Hypothesis (python3-hypothesis)")
    def test_property_every_layout_like_numpy():
        pass

else:

    @st.composite
    def arrays(draw):
        """An array of a table dtype in one of the layouts NumPy produces, and its dense copy."""
        dt = np.dtype(draw(st.sampled_from(DTYPES)))
        shape = draw(hnp.array_shapes(min_dims=1, max_dims=2, min_side=1, max_side=40))
        if dt == np.bool_:
            elements = st.booleans()
        elif np.issubdtype(dt, np.integer):
            info = np.iinfo(dt)  # (within the type: int8, unsigned types)
            elements = st.integers(max(-1000, int(info.min)), min(1000, int(info.max)))
        else:
            elements = st.floats(-1000, 1000, width=min(dt.itemsize * 8, 64)).filter(lambda v: v == v)
        base = draw(hnp.arrays(dt, shape, elements=elements))
        layout = draw(st.sampled_from(["plain", "fortran", "reversed", "step", "broadcast", "swapped", "transposed"]))
        if layout == "fortran":
            x = np.asfortranarray(base)
        elif layout == "reversed":
            x = base[::-1]
        elif layout == "step":
            x = base[::2]
        elif layout == "broadcast":
            x = np.broadcast_to(base[:1], base.shape)
        elif layout == "swapped":
            x = base.astype(dt.newbyteorder("S"))
        elif layout == "transposed":
            x = base.T
        else:
            x = base
        return x, np.ascontiguousarray(x).astype(dt)


    # The same examples on every run (a CI log that can be replayed); TANDEM_HYPOTHESIS_RANDOM=1 draws new ones,
    # TANDEM_HYPOTHESIS_EXAMPLES=N more of them.
    @settings(max_examples=int(os.environ.get("TANDEM_HYPOTHESIS_EXAMPLES", "300")), deadline=None,
              derandomize=os.environ.get("TANDEM_HYPOTHESIS_RANDOM") != "1", database=None)
    @given(arrays(), st.sampled_from(OPS), st.sampled_from([None, 0, 1, -1]), st.sampled_from(BACKENDS))
    def test_property_every_layout_like_numpy(x_dense, op, axis, backend):
        x, dense = x_dense
        if axis is not None and x.ndim != 2:
            axis = None
        eng = tandem.Engine(backend)
        want = numpy_result(op, dense, axis)
        check(op, getattr(eng, op)(x, axis=axis), want, dense, axis)
        if op == "sum":  # the same value bit for bit in deterministic mode, whatever the layout
            assert eng.sum(x, deterministic=True).tobytes() == eng.sum(dense, deterministic=True).tobytes()
