"""tandem's Python module on CuPy arrays and PyTorch CUDA tensors (issue #13), read in place on the GPU:
results come back as the same library's arrays, the stream handshake orders the producer's pending
work first, and deterministic results equal the CPU engine's bits on the same data. Skipped without a
usable GPU, or without CuPy / PyTorch."""
import decimal
import fractions
import itertools
import math

import numpy as np
import pytest

import tandem
from test_numpy import check, numpy_result

CUDA = {b["name"]: b for b in tandem.backend_status()}["cuda"]
pytestmark = pytest.mark.skipif(not CUDA["usable"], reason="no usable CUDA GPU")


def libraries():
    found = []
    try:
        import cupy  # noqa: F401
        found.append("cupy")
    except Exception:
        pass
    try:
        import torch
        if torch.cuda.is_available():
            found.append("torch")
    except Exception:
        pass
    return found


@pytest.fixture(params=libraries() or [pytest.param("none", marks=pytest.mark.skip(reason="no CuPy or PyTorch"))])
def lib(request):
    import importlib
    return importlib.import_module(request.param)


def to_device(lib, x):
    return lib.asarray(x) if lib.__name__ == "cupy" else lib.from_numpy(x).cuda()


def to_host(lib, y):
    return lib.asnumpy(y) if lib.__name__ == "cupy" else y.cpu().numpy()


def broadcast(lib, d, shape):
    """The library's broadcast (stride-0) view of device array d with `shape`."""
    return d.expand(*shape) if lib.__name__ == "torch" else lib.broadcast_to(d, shape)


def device_peak(lib, calls):
    """The results of calls() and how far the library's device memory grew meanwhile (PyTorch: its peak
    allocation; CuPy: its memory pool, emptied first), the GPU's work waited for."""
    if lib.__name__ == "torch":
        lib.cuda.synchronize()
        lib.cuda.reset_peak_memory_stats()
        before = lib.cuda.max_memory_allocated()
        got = calls()
        lib.cuda.synchronize()
        return got, lib.cuda.max_memory_allocated() - before
    pool = lib.get_default_memory_pool()
    pool.free_all_blocks()
    before = pool.total_bytes()
    got = calls()
    lib.cuda.Device().synchronize()
    return got, pool.total_bytes() - before


OPS = list(tandem.ops)


@pytest.mark.parametrize("n", [1, 33, 4097, 1000003])
def test_every_op_in_place(lib, n):
    eng = tandem.Engine("cuda")
    cpu = tandem.Engine("cpu")
    x = np.random.default_rng(n).uniform(-1, 1, n).astype(np.float32)
    d = to_device(lib, x)
    for op in OPS:
        kind = tandem.op_info[op]["result"]
        canonical = kind == "sum"  # sums: deterministic mode's bits are the CPU's
        got = getattr(eng, op)(d, deterministic=canonical)
        assert type(got).__module__.split(".")[0] == lib.__name__  # the input's own library
        want = getattr(cpu, op)(x, deterministic=canonical)
        g = to_host(lib, got)
        if kind in ("sum", "mean"):
            if canonical:  # deterministic: the CPU's bits
                assert g.tobytes() == np.asarray(want).tobytes()
            else:  # a float sum in another order: within a tree sum's bound, relative to mean(|x|)
                np.testing.assert_allclose(g, want, rtol=0, atol=4 * np.log2(n + 1) * 6e-8 * np.abs(x).mean() + 1e-30)
        else:
            assert g == want


def test_axes_and_strided_views(lib):
    eng = tandem.Engine("cuda")
    a = np.random.default_rng(1).uniform(-1, 1, (301, 47)).astype(np.float64)
    d = to_device(lib, a)
    for axis in (0, 1):
        np.testing.assert_allclose(to_host(lib, eng.sum(d, axis=axis)), a.sum(axis=axis), rtol=1e-12)
        np.testing.assert_array_equal(to_host(lib, eng.argmax(d, axis=axis)), a.argmax(axis=axis))
    np.testing.assert_allclose(to_host(lib, eng.sum(d.T, axis=1)), a.T.sum(axis=1), rtol=1e-12)  # columns, in place
    flat = to_device(lib, a.ravel())
    np.testing.assert_allclose(to_host(lib, eng.max(flat[::7])), a.ravel()[::7].max())


def test_matmul_in_place(lib):
    eng = tandem.Engine("cuda")
    rng = np.random.default_rng(2)
    a = rng.uniform(-1, 1, (65, 33)).astype(np.float32)
    b = rng.uniform(-1, 1, (33, 17)).astype(np.float32)
    c = eng.matmul(to_device(lib, a), to_device(lib, b))
    assert type(c).__module__.split(".")[0] == lib.__name__
    np.testing.assert_allclose(to_host(lib, c), a.astype(np.float64) @ b, rtol=1e-5, atol=1e-5)
    out = to_device(lib, np.zeros((65, 17), np.float32))
    assert eng.matmul(to_device(lib, a), to_device(lib, b), out=out) is out
    np.testing.assert_allclose(to_host(lib, out), a.astype(np.float64) @ b, rtol=1e-5, atol=1e-5)


def test_stream_handshake(lib):
    """The producer's pending work on its own stream is ordered before tandem reads the array."""
    eng = tandem.Engine("cuda")
    n = 1 << 24
    if lib.__name__ == "cupy":
        s = lib.cuda.Stream(non_blocking=True)
        with s:
            x = lib.zeros(n, dtype=lib.float32)
            x += 1  # enqueued on s, maybe unfinished when tandem is called
            got = eng.sum(x)
    else:
        s = lib.cuda.Stream()
        with lib.cuda.stream(s):
            x = lib.zeros(n, dtype=lib.float32, device="cuda")
            x += 1
            got = eng.sum(x)
    assert float(to_host(lib, got)) == float(n)


def test_errors(lib):
    cpu = tandem.Engine("cpu")
    with pytest.raises(tandem.Error, match="GPU array"):
        cpu.sum(to_device(lib, np.zeros(4, np.float32)))


def test_matmul_grouped_and_mixed_in_place(lib):
    """matmul_grouped on the library's arrays (a group per expert, one matrix each), and a mixed product of a
    float32 activation and a float16 weight stored transposed (x @ w.T, as a linear layer)."""
    eng = tandem.Engine("cuda")
    rng = np.random.default_rng(5)
    sizes = [3, 0, 6, 1]
    a = rng.integers(-4, 5, (10, 12)).astype(np.float32)
    b = rng.integers(-4, 5, (4, 12, 7)).astype(np.float32)
    c = eng.matmul_grouped(to_device(lib, a), to_device(lib, b), sizes)
    assert type(c).__module__.split(".")[0] == lib.__name__
    want = np.concatenate([a[r0:r0 + s] @ b[g] for g, (r0, s) in enumerate(zip(np.cumsum([0] + sizes), sizes))])
    np.testing.assert_array_equal(to_host(lib, c), want)
    out = to_device(lib, np.zeros((10, 7), np.float32))
    assert eng.matmul_grouped(to_device(lib, a), to_device(lib, b), sizes, out=out) is out
    np.testing.assert_array_equal(to_host(lib, out), want)
    x = rng.standard_normal((5, 64)).astype(np.float32)
    w = rng.standard_normal((48, 64)).astype(np.float16)
    y = eng.matmul(to_device(lib, x), to_device(lib, w).T)
    np.testing.assert_allclose(to_host(lib, y), x.astype(np.float64) @ w.astype(np.float64).T, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int32])
def test_topk_on_the_gpu(lib, dtype):
    """topk of the library's arrays on their GPU (the Buffer topk's kernel), every axis, largest and smallest,
    k from 1 past 1024, against the host topk of the same data (one documented order: the same results)."""
    eng = tandem.Engine("cuda")
    host = tandem.Engine("cpu")
    rng = np.random.default_rng(9)
    x = rng.integers(-50, 50, (3, 2000, 5)).astype(dtype)  # (ties)
    if np.issubdtype(dtype, np.floating):
        x[0, 7, 1] = np.nan
        x[1, ::97, 2] = -0.0
    for axis in (-1, 1, 0):
        n = x.shape[axis]
        for k in sorted({1, 2, min(64, n), min(1100, n), n}):
            for largest in (True, False):
                v, i = eng.topk(to_device(lib, x), k, axis=axis, largest=largest)
                assert type(v).__module__.split(".")[0] == lib.__name__
                wv, wi = host.topk(x, k, axis=axis, largest=largest)
                np.testing.assert_array_equal(to_host(lib, i), wi)
                np.testing.assert_array_equal(to_host(lib, v), wv)
    # a transposed view (copied with the axis last by the library) and a row of a vocabulary's size
    logits = rng.standard_normal((4, 32000)).astype(np.float32)
    v, i = eng.topk(to_device(lib, logits.T).T, 50)
    wv, wi = host.topk(logits, 50)
    np.testing.assert_array_equal(to_host(lib, i), wi)
    np.testing.assert_array_equal(to_host(lib, v), wv)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int32, np.uint8])
def test_argsort_on_the_gpu(lib, dtype):
    """argsort of the library's arrays on their GPU (each line sorted there), every axis, against NumPy's stable
    argsort (NaN last, as NumPy's); a line of a vocabulary's size."""
    eng = tandem.Engine("cuda")
    rng = np.random.default_rng(10)
    x = rng.integers(0, 50, (3, 2000, 5)).astype(dtype)  # (ties)
    if np.issubdtype(dtype, np.floating):
        x[0, 7, 1] = np.nan
        x[1, ::97, 2] = -0.0
    for axis in (-1, 1, 0):
        got = eng.argsort(to_device(lib, x), axis=axis)
        assert type(got).__module__.split(".")[0] == lib.__name__
        np.testing.assert_array_equal(to_host(lib, got), np.argsort(x, axis=axis, kind="stable"))
    logits = rng.standard_normal((3, 32000)).astype(np.float32)
    np.testing.assert_array_equal(to_host(lib, eng.argsort(to_device(lib, logits))),
                                  np.argsort(logits, axis=-1, kind="stable"))


def test_torch_bfloat16_in_place():
    torch = pytest.importorskip("torch")
    eng = tandem.Engine("cuda")
    x = torch.rand(4097, device="cuda").to(torch.bfloat16)
    ref = x.float().cpu().numpy()
    s = eng.sum(x)
    assert s.dtype == torch.bfloat16 and s.is_cuda  # NumPy's rule: floats keep their type (computed in float32)
    # one rounding to bfloat16 (8 significant bits: within 2^-8 relative) of a float32 sum
    np.testing.assert_allclose(float(s.float().cpu()), ref.astype(np.float64).sum(), rtol=2.0**-8 + 1e-5)
    assert int(eng.argmax(x).cpu()) == ref.argmax()
    a = torch.rand(65, 33, device="cuda").to(torch.bfloat16)
    b = torch.rand(33, 17, device="cuda").to(torch.bfloat16)
    c = eng.matmul(a, b)
    assert c.dtype == torch.float32 and c.is_cuda
    want = a.double().cpu().numpy() @ b.double().cpu().numpy()
    np.testing.assert_allclose(c.cpu().numpy(), want, rtol=1e-5, atol=1e-5)


def test_numpy_conventions_in_place(lib):
    """Axis tuples, keepdims, dtype= and out= on device arrays, with NumPy's result types and shapes."""
    eng = tandem.Engine("cuda")
    x = np.random.default_rng(4).uniform(-1, 1, (4, 5, 6)).astype(np.float32)
    d = to_device(lib, x)
    for axis in (None, 0, -1, (0, 2), (1,), (0, 1, 2)):
        for keepdims in (False, True):
            want = np.sum(x.astype(np.float64), axis=axis, keepdims=keepdims)
            g = to_host(lib, eng.sum(d, axis=axis, keepdims=keepdims))
            assert g.dtype == np.float32 and g.shape == np.shape(want), (axis, keepdims)
            np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-5)
            g = to_host(lib, eng.max(d, axis=axis, keepdims=keepdims))
            np.testing.assert_array_equal(g, np.max(x, axis=axis, keepdims=keepdims))
            g = to_host(lib, eng.mean(d, axis=axis, keepdims=keepdims))
            assert g.dtype == np.float32
            np.testing.assert_allclose(g, np.mean(x.astype(np.float64), axis=axis, keepdims=keepdims), rtol=1e-5,
                                       atol=1e-6)
    for axis in (None, 0, 2, -2):
        g = to_host(lib, eng.argmin(d, axis=axis))
        assert g.dtype == np.int64
        np.testing.assert_array_equal(g, np.argmin(x, axis=axis))
    g = to_host(lib, eng.sum(d, axis=1, dtype=np.float64))  # dtype=: converted first, summed in float64
    assert g.dtype == np.float64
    np.testing.assert_allclose(g, np.sum(x.astype(np.float64), axis=1), rtol=1e-12)
    i = np.arange(-30, 30, dtype=np.int32).reshape(6, 10)
    di = to_device(lib, i)
    g = to_host(lib, eng.sum(di, axis=0))
    assert g.dtype == np.int64
    np.testing.assert_array_equal(g, np.sum(i, axis=0))
    g = to_host(lib, eng.mean(di, axis=1))
    assert g.dtype == np.float64
    np.testing.assert_allclose(g, np.mean(i, axis=1), rtol=1e-15)
    out = to_device(lib, np.zeros((4, 6), np.float32))
    assert eng.sum(d, axis=1, out=out) is out
    np.testing.assert_allclose(to_host(lib, out), np.sum(x.astype(np.float64), axis=1), rtol=1e-5, atol=1e-5)
    with pytest.raises(tandem.ValueError):
        eng.min(to_device(lib, np.zeros((0, 3), np.float32)), axis=0)
    with pytest.raises(tandem.ValueError):
        eng.sum(d, axis=(0, 0))


def gpu_count():
    return CUDA["devices"]


def on_gpu(lib, x, g):
    """x (a NumPy array) on GPU g of library lib."""
    if lib.__name__ == "cupy":
        with lib.cuda.Device(g):
            return lib.asarray(x)
    return lib.from_numpy(x).to("cuda:%d" % g)


def gpu_of(lib, y):
    return y.device.id if lib.__name__ == "cupy" else y.device.index


@pytest.mark.skipif(not CUDA["usable"] or gpu_count() < 2, reason="needs 2 GPUs")
def test_several_gpus(lib):
    """An engine over several GPUs reads a CuPy / PyTorch array where it lies, on any of its GPUs (listed in
    any order): every op whole and per axis, out=, products; results on the array's GPU, deterministic bits
    those of the CPU engine; arrays on two GPUs in one product, or on a GPU the engine does not run on, are
    refused with a message that names the GPUs."""
    gpus = list(range(gpu_count()))[::-1]  # (the last GPU first: results are not the first device's by accident)
    eng = tandem.Engine("cuda", devices=gpus)
    assert [d["index"] for d in eng.devices()] == gpus
    assert repr(eng) == "tandem.Engine('cuda', devices=%s)" % gpus
    cpu = tandem.Engine("cpu")
    rng = np.random.default_rng(7)
    x = rng.uniform(-1, 1, 1 << 20).astype(np.float32)
    assert eng.sum(x, deterministic=True).tobytes() == cpu.sum(x, deterministic=True).tobytes()
    assert eng.argmax(x) == cpu.argmax(x)
    m = rng.uniform(-1, 1, (37, 1029)).astype(np.float32)
    a = rng.uniform(-1, 1, (65, 129)).astype(np.float32)
    b = rng.uniform(-1, 1, (129, 33)).astype(np.float32)
    for g in gpus:
        d, dm = on_gpu(lib, x, g), on_gpu(lib, m, g)
        for op in OPS:
            r = getattr(eng, op)(d)
            assert gpu_of(lib, r) == g, (op, g)
            check(op, to_host(lib, r), numpy_result(op, x), x)
            for axis in (0, 1):
                r = getattr(eng, op)(dm, axis=axis)
                assert gpu_of(lib, r) == g, (op, g, axis)
                check(op, to_host(lib, r), numpy_result(op, m, axis=axis), m, axis=axis)
        for op in ("sum", "mean", "sumsq", "prod"):
            for axis in (None, 0, 1):
                got = to_host(lib, getattr(eng, op)(dm, axis=axis, deterministic=True))
                want = getattr(cpu, op)(m, axis=axis, deterministic=True)
                assert np.asarray(got).tobytes() == np.asarray(want).tobytes(), (op, g, axis)
        out = on_gpu(lib, np.zeros(37, np.float32), g)
        assert eng.max(dm, axis=1, out=out) is out
        np.testing.assert_array_equal(to_host(lib, out), m.max(axis=1))
        c = eng.matmul(on_gpu(lib, a, g), on_gpu(lib, b, g))
        assert gpu_of(lib, c) == g
        want = a.astype(np.float64) @ b.astype(np.float64)
        bound = 130 * 2.0**-24 * (np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64))
        assert np.all(np.abs(to_host(lib, c) - want) <= bound), g
        det = eng.matmul(on_gpu(lib, a, g), on_gpu(lib, b, g), deterministic=True)
        assert to_host(lib, det).tobytes() == cpu.matmul(a, b, deterministic=True).tobytes(), g
        with pytest.raises(tandem.Error, match="out= is on GPU"):
            eng.max(dm, axis=1, out=on_gpu(lib, np.zeros(37, np.float32), gpus[0] if g != gpus[0] else gpus[1]))
    with pytest.raises(tandem.Error, match="a is on GPU %d and b on GPU %d" % (gpus[0], gpus[1])):
        eng.matmul(on_gpu(lib, a, gpus[0]), on_gpu(lib, b, gpus[1]))
    other = tandem.Engine("cuda", device=1)
    with pytest.raises(tandem.Error, match="on GPU 0 but the engine runs on GPU 1"):
        other.sum(on_gpu(lib, x, 0))
    if gpu_count() > 2:
        pair = tandem.Engine("cuda", devices=[0, 1])
        with pytest.raises(tandem.Error, match="on GPU 2 but the engine runs on GPUs 0, 1"):
            pair.sum(on_gpu(lib, x, 2))


@pytest.mark.skipif(not CUDA["usable"] or gpu_count() < 2, reason="needs 2 GPUs")
def test_several_gpus_other_libraries():
    """Arrays of other libraries (only DLPack, or only __cuda_array_interface__) on the second GPU of an
    engine over several: read there, on that GPU's own stream."""
    cp = pytest.importorskip("cupy")
    eng = tandem.Engine("cuda", devices=[0, 1])
    a = np.random.default_rng(3).uniform(-1, 1, (40, 50)).astype(np.float32)
    b = np.random.default_rng(4).uniform(-1, 1, (50, 30)).astype(np.float32)
    with cp.cuda.Device(1):
        da, db, dc = cp.asarray(a), cp.asarray(b), cp.zeros((40, 30), cp.float32)
    out = OnlyCudaArrayInterface(dc)
    assert eng.matmul(OnlyCudaArrayInterface(da), OnlyCudaArrayInterface(db), out=out) is out
    want = a.astype(np.float64) @ b.astype(np.float64)
    assert np.all(np.abs(cp.asnumpy(dc) - want) <= 60 * 2.0**-24 * (np.abs(a) @ np.abs(b)))


class OnlyCudaArrayInterface:
    """A device array that offers only __cuda_array_interface__ (as Numba's do)."""

    def __init__(self, arr):
        self.arr = arr
        self.__cuda_array_interface__ = arr.__cuda_array_interface__


def test_cuda_array_interface_in_place():
    """An object with only __cuda_array_interface__ is read in place, after the work pending on the stream
    its interface names (a long fill of a, still running when tandem is called)."""
    cp = pytest.importorskip("cupy")
    eng = tandem.Engine("cuda")
    k = 1 << 22
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        a = cp.zeros((1, k), cp.float32)
        b = cp.ones((k, 1), cp.float32)
        c = cp.zeros((1, 1), cp.float32)
        for _ in range(20):
            a += 0.5  # enqueued on s: 10.0 when done
        out = OnlyCudaArrayInterface(c)
        assert eng.matmul(OnlyCudaArrayInterface(a), OnlyCudaArrayInterface(b), out=out) is out
    assert float(cp.asnumpy(c)[0, 0]) == 10.0 * k
    with pytest.raises(tandem.Error, match="CuPy or PyTorch"):
        eng.sum(OnlyCudaArrayInterface(a))  # no library to make the result with


def test_full_reductions_of_broadcasts(lib):
    """A full reduction of a device broadcast whose elements are not one run reads its distinct elements (no
    copy of the broadcast: the library's peak memory stays far below it) and gives NumPy's answer on the same
    values (the first repeat's index, integer sums and products modulo 2^64, float sums within the sum's bound)
    and the host engine's result type; integer results (exact) and deterministic float results have the CPU
    engine's bits on the same values in one array."""
    eng, cpu = tandem.Engine("cuda"), tandem.Engine("cpu")
    rng = np.random.default_rng(11)
    for dt in (np.float32, np.float64, np.float16, np.int32, np.int64, np.uint8, np.uint64, np.bool_):
        if dt == np.bool_:
            base = rng.uniform(size=(3, 1, 4)) < 0.5
        elif np.issubdtype(dt, np.integer):
            base = rng.integers(np.iinfo(dt).min, np.iinfo(dt).max, (3, 1, 4), dtype=dt, endpoint=True)
        else:
            base = rng.uniform(-4, 4, (3, 1, 4)).astype(dt)
        base[2, 0, 1] = base[1, 0, 3] = base.max()  # ties: the first repeat of the first equal value wins
        d = to_device(lib, np.ascontiguousarray(base))
        cases = [(np.broadcast_to(base, (3, 5, 4)), (3, 5, 4)), (np.broadcast_to(base, (2, 3, 5, 4)), (2, 3, 5, 4))]
        for hv, shape in cases:
            dv = broadcast(lib, d, shape)
            for op in OPS:
                g = np.asarray(to_host(lib, getattr(eng, op)(dv)))
                assert g.dtype == np.asarray(getattr(cpu, op)(hv)).dtype, (op, dt)
                if op == "mean" and not np.issubdtype(dt, np.floating):  # (the exact sum, rounded once, divided;
                    # outside deterministic mode the distinct elements': NumPy's float64 sum rounds more)
                    want = float(sum(int(v) for v in hv.ravel())) / hv.size
                    assert abs(float(g) - want) <= 2.0**-51 * abs(want), (dt, float(g), want)
                else:
                    check(op, g, numpy_result(op, hv), hv)
            exact = not np.issubdtype(dt, np.floating)
            for op, det in itertools.product(("sum", "mean", "sumsq", "prod"), (True, False) if exact else (True,)):
                g = np.asarray(to_host(lib, getattr(eng, op)(dv, deterministic=det)))
                w = np.asarray(getattr(cpu, op)(np.ascontiguousarray(hv), deterministic=det))
                if not (op == "mean" and not det):  # (a mean outside deterministic mode: the distinct elements')
                    assert g.tobytes() == w.tobytes(), (op, dt, shape, det)
    # 2^22 x 7 floats (117 MB as a copy): no copy is made.
    row = to_device(lib, rng.uniform(-1, 1, (1, 7)).astype(np.float32))
    big = broadcast(lib, row, (2**22, 7))
    # and 2^22 x 7 int64, uint64, float64 (235 MB each): integer products, an exact mean, unsigned sums
    ints_h = np.array([[3, -5, 7, 1, -1, 9, 11]], np.int64)
    uints_h = np.array([[2**64 - 3, 5, 2**63, 1, 7, 2, 3]], np.uint64)
    floats_h = np.array([[1.0000001, 0.9999999, -1.0, 1.25, 0.8, 1.0, -1.0]])
    ints, uints, floats = (to_device(lib, v) for v in (ints_h, uints_h, floats_h))

    # and deterministic float results, a piece at a time (2^22 + 3 rows: the last chunk a part)
    det_ops = ("sum", "mean", "sumsq", "prod")
    odd = broadcast(lib, row, (2**22 + 3, 7))

    def more(i, u, f):
        i, u, f = (broadcast(lib, v, (2**22, 7)) for v in (i, u, f))
        return [eng.prod(i), eng.prod(u), eng.sum(u), eng.mean(i, deterministic=True), eng.prod(f)] + [
            getattr(eng, op)(odd, deterministic=True) for op in det_ops]
    got, grew = device_peak(
        lib, lambda: [eng.sum(big), eng.argmax(big), eng.mean(big), eng.min(big)] + more(ints, uints, floats))
    assert grew < 16 * 2**20, grew
    h = to_host(lib, row)[0]
    assert int(to_host(lib, got[1])) == int(np.argmax(h))
    assert float(to_host(lib, got[3])) == float(h.min())
    # (7 float32 adds in any order, then the product with the repeats and the float32 result rounded once)
    size = float(np.abs(h.astype(np.float64)).sum())
    assert abs(float(to_host(lib, got[0])) - float(h.astype(np.float64).sum()) * 2**22) <= 9 * 2.0**-24 * size * 2**22
    assert abs(float(to_host(lib, got[2])) - float(h.astype(np.float64).mean())) <= 9 * 2.0**-24 * size / 7
    k, n = 2**22, 7 * 2**22
    prod_i, prod_u = math.prod(int(v) for v in ints_h[0]), math.prod(int(v) for v in uints_h[0])
    assert int(to_host(lib, got[4])) == np.uint64(pow(prod_i, k, 2**64)).astype(np.int64)
    assert int(to_host(lib, got[5])) == pow(prod_u, k, 2**64)
    assert int(to_host(lib, got[6])) == sum(int(v) for v in uints_h[0]) * k % 2**64
    assert float(to_host(lib, got[7])) == float(int(ints_h.sum()) * k) / n
    want = (math.prod(fractions.Fraction(v) for v in floats_h[0].tolist()))
    with decimal.localcontext() as c:
        c.prec = 50
        want = float((decimal.Decimal(want.numerator) / decimal.Decimal(want.denominator)) ** k)
    assert abs(float(to_host(lib, got[8])) - want) <= (n + 8) * 2.0**-53 * abs(want)
    flat = np.ascontiguousarray(np.broadcast_to(h, (2**22 + 3, 7)))
    for op, g in zip(det_ops, got[9:]):
        assert np.asarray(to_host(lib, g)).tobytes() == np.asarray(getattr(cpu, op)(flat, deterministic=True)).tobytes()


def test_reduced_axes_of_broadcasts(lib):
    """Reductions over several axes, some of them repeats the matrix plan cannot read as one matrix, of a
    device broadcast: one repeat read (no copy: the library's peak memory stays far below the 63 MB a copy
    takes), the results repeated (sums times the repeats, products to their power), NumPy's answer."""
    eng = tandem.Engine("cuda")
    rng = np.random.default_rng(8)
    n = 2**19 + 3
    for dt, base in ((np.float64, 1 + rng.uniform(-2e-6, 2e-6, (3, 5))),
                     (np.int64, rng.integers(-2**62, 2**62, (3, 5))),
                     (np.uint64, rng.integers(0, 2**64, (3, 5), np.uint64)), (np.int32, rng.integers(-9, 9, (3, 5)))):
        h = np.asarray(base, dt)
        d = to_device(lib, h)
        x = broadcast(lib, d, (n, 3, 5))
        hx = np.broadcast_to(h, (n, 3, 5))
        for axis in ((0, 1), (0, 2)):
            ops = ["min", "max", "sum", "sumsq", "prod"] + (["mean"] if dt == np.float64 else [])
            got, grew = device_peak(lib, lambda: [getattr(eng, op)(x, axis=axis) for op in ops])
            assert grew < 16 * 2**20, (dt, axis, grew)
            for op, g in zip(ops, got):
                g = np.asarray(to_host(lib, g))
                if op == "prod" and dt == np.float64:
                    w = np.prod(h, axis=axis[1] - 1) ** n
                    np.testing.assert_allclose(g, w, rtol=2 * (3 * n + 8) * 2.0**-53)
                else:
                    check(op, g, numpy_result(op, hx, axis=axis), hx, axis=axis)


def test_deterministic_reduced_axes_of_broadcasts(lib):
    """Deterministic float results and integer means over several axes of a device broadcast the matrix plan
    cannot read as one matrix: copied a block of results at a time (the library's peak memory well below a
    copy's), or a result alone past a block in pieces, with the CPU engine's bits over one array."""
    eng, cpu = tandem.Engine("cuda"), tandem.Engine("cpu")
    for base, n in ((np.random.default_rng(4).uniform(-2, 2, (3, 5)).astype(np.float32), 2**20 + 3),
                    (np.arange(2**62, 2**62 + 15, dtype=np.int64).reshape(3, 5), 2**20 + 3),
                    (np.random.default_rng(5).uniform(-2, 2, (3, 5)), 2**21 + 1)):
        x = broadcast(lib, to_device(lib, base), (n, 3, 5))
        flat = np.ascontiguousarray(np.broadcast_to(base, (n, 3, 5)))
        for axis in ((0, 1), (0, 2)):
            for op in ("sum", "mean"):
                got, grew = device_peak(lib, lambda: getattr(eng, op)(x, axis=axis, deterministic=True))
                assert grew < flat.nbytes / 2 + 2**20, (op, base.dtype, axis, grew)
                g = np.asarray(to_host(lib, got))
                w = np.asarray(getattr(cpu, op)(flat, axis=axis, deterministic=True))
                assert g.tobytes() == w.tobytes() and g.dtype == w.dtype, (op, base.dtype, axis)


def test_moments_and_casts_of_broadcasts(lib):
    """var / std and dtype= of a device broadcast cast and subtract as its distinct elements, broadcast again:
    the library's memory grows far less than a copy (134 MB and more), with the bits of one array in
    deterministic mode."""
    eng = tandem.Engine("cuda")
    for dt in (np.float32, np.int32, np.float16):
        base = np.random.default_rng(6).uniform(-3, 3, 64).astype(dt)
        x = broadcast(lib, to_device(lib, base), (2**19, 64))
        flat = to_device(lib, np.ascontiguousarray(np.broadcast_to(base, (2**19, 64))))
        for axis in (None, 0, 1):
            calls = [lambda a: eng.var(a, axis=axis, deterministic=True),
                     lambda a: eng.std(a, axis=axis, ddof=1, deterministic=True),
                     lambda a: eng.mean(a, axis=axis, dtype=np.float64, deterministic=True)]
            for k, call in enumerate(calls):
                got, grew = device_peak(lib, lambda: call(x))
                assert grew < 24 * 2**20, (dt, axis, k, grew)
                g, w = np.asarray(to_host(lib, got)), np.asarray(to_host(lib, call(flat)))
                assert g.tobytes() == w.tobytes() and g.dtype == w.dtype, (dt, axis, k)


def test_masks_of_broadcasts(lib):
    """where= on a device broadcast whose mask repeats along the same axis: the selection made of the first
    elements there, broadcast again (the library's memory grows far less than the 117 MB of a selection of
    the whole), with the CPU engine's bits over the same elements and mask in one array."""
    eng, cpu = tandem.Engine("cuda"), tandem.Engine("cpu")
    base = np.random.default_rng(7).uniform(-3, 3, 7).astype(np.float32)
    row = np.array([True, False, True, True, False, True, True])
    x = broadcast(lib, to_device(lib, base), (2**22, 7))
    keep = broadcast(lib, to_device(lib, row), (2**22, 7))
    flat, flat_keep = np.ascontiguousarray(np.broadcast_to(base, (2**22, 7))), np.broadcast_to(row, (2**22, 7)).copy()
    for op, kw in (("sum", {}), ("mean", {}), ("max", {"initial": -np.inf}), ("sum", {"axis": 0}), ("var", {})):
        got, grew = device_peak(lib, lambda: getattr(eng, op)(x, where=keep, deterministic=True, **kw))
        assert grew < 20 * 2**20, (op, kw, grew)
        want = getattr(cpu, op)(flat, where=flat_keep, deterministic=True, **kw)
        g = np.asarray(to_host(lib, got))
        assert g.tobytes() == np.asarray(want).tobytes(), (op, kw)


def test_deterministic_broadcasts_in_pieces(lib):
    """Deterministic float results of a device broadcast that is not one run: chunks of 4096 elements exactly,
    one chunk and a bit, pieces past 2^20 elements, and the special values, with the CPU engine's bits."""
    eng, cpu = tandem.Engine("cuda"), tandem.Engine("cpu")
    for dt in (np.float32, np.float64, np.float16):
        for row in ([-0.0, -0.0], [1.5, np.nan], [np.inf, -0.25], [np.inf, -np.inf], [3.0, -1.0]):
            d = to_device(lib, np.array([row], dt))
            for n in (4096, 2049, 3 * 2**19 + 2048):
                x = broadcast(lib, d, (n, 2))
                flat = np.ascontiguousarray(np.broadcast_to(np.array(row, dt), (n, 2)))
                for op in ("sum", "mean", "sumsq", "prod"):
                    g = np.asarray(to_host(lib, getattr(eng, op)(x, deterministic=True)))
                    w = np.asarray(getattr(cpu, op)(flat, deterministic=True))
                    assert g.tobytes() == w.tobytes() and g.dtype == w.dtype, (op, dt, row, n, g, w)
    # a 3-d broadcast whose pieces cut its axes anywhere: boxes of every rank
    base = np.random.default_rng(3).uniform(-2, 2, (5, 1, 3)).astype(np.float32)
    d = to_device(lib, base)
    for shape in ((5, 70001, 3), (2, 5, 4099, 3)):
        x = broadcast(lib, d, shape)
        flat = np.ascontiguousarray(np.broadcast_to(base, shape))
        for op in ("sum", "mean", "sumsq", "prod"):
            g = np.asarray(to_host(lib, getattr(eng, op)(x, deterministic=True)))
            assert g.tobytes() == np.asarray(getattr(cpu, op)(flat, deterministic=True)).tobytes(), (op, shape)


def test_layouts_copied_by_the_library(lib):
    """Device views tandem cannot read in place (negative strides) are copied by their own library,
    broadcasts (stride 0) are read in place, and both give the CPU engine's answers on the same values."""
    eng, cpu = tandem.Engine("cuda"), tandem.Engine("cpu")
    x = np.random.default_rng(5).uniform(-1, 1, (33, 17)).astype(np.float32)
    d = to_device(lib, x)
    if lib.__name__ == "torch":
        views = [(d[:1].expand(33, 17), np.broadcast_to(x[:1], (33, 17))), (d.flip(0), x[::-1])]
    else:
        views = [(lib.broadcast_to(d[:1], (33, 17)), np.broadcast_to(x[:1], (33, 17))), (d[::-1], x[::-1])]
    for dv, hv in views:
        for op in OPS:
            for axis in (None, 0, 1):
                g = np.asarray(to_host(lib, getattr(eng, op)(dv, axis=axis, deterministic=True)))
                w = np.asarray(getattr(cpu, op)(np.ascontiguousarray(hv), axis=axis, deterministic=True))
                np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
        b = to_device(lib, np.ones((17, 3), np.float32))
        np.testing.assert_allclose(to_host(lib, eng.matmul(dv, b)), hv @ np.ones((17, 3), np.float32), rtol=1e-5)
