"""Engine.topk and Engine.argsort on NumPy arrays, every element type, 1-D to 3-D along each axis, against
references written here: argsort against NumPy's stable argsort; topk against each line's (value, index)
pairs sorted by the documented order (NaN first, most extreme values first, equal values by index), for the
largest and the smallest. Data with ties, signed zeros, infinities and NaN. Errors: k out of range, an axis out
of range, a 0-d array."""
import itertools
import math

import numpy as np
import pytest

import tandem

from test_numpy import BACKENDS


def data(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    x = rng.integers(-4, 5, shape).astype(np.float64)
    if np.issubdtype(dtype, np.unsignedinteger):
        x = np.abs(x)
    if np.issubdtype(dtype, np.floating):
        flat = x.reshape(-1)
        flat[::11] = -0.0
        flat[3::13] = np.nan
        flat[5::17] = np.inf
        flat[7::19] = -np.inf
    return x.astype(dtype)


def reference_topk(line, k, largest):
    """Indices of the k first elements of one line in topk's order."""
    def key(i):
        v = float(line[i])
        nan = math.isnan(v)
        return (not nan, 0.0 if nan else (-v if largest else v), i)
    return sorted(range(len(line)), key=key)[:k]


TYPES = [np.float32, np.float64, np.float16, np.int32, np.int64, np.uint8, np.bool_]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", TYPES)
def test_topk_and_argsort_match_references(backend, dtype):
    eng = tandem.Engine(backend)
    for shape in [(1,), (7,), (33,), (5, 9), (4, 3, 6)]:
        x = data(shape, dtype, len(shape) * 100 + shape[-1])
        for axis in range(-len(shape), len(shape)):
            got = eng.argsort(x, axis=axis)
            assert got.dtype == np.int64
            np.testing.assert_array_equal(got, np.argsort(x, axis=axis, kind="stable"))
            n = x.shape[axis]
            for k, largest in itertools.product(sorted({1, (n + 1) // 2, n}), (True, False)):
                values, indices = eng.topk(x, k, axis=axis, largest=largest)
                assert values.dtype == x.dtype and indices.dtype == np.int64
                moved, vals, idx = np.moveaxis(x, axis, -1), np.moveaxis(values, axis, -1), np.moveaxis(indices, axis, -1)
                assert idx.shape == moved.shape[:-1] + (k,)
                for pos in np.ndindex(moved.shape[:-1]):
                    want = reference_topk(moved[pos], k, largest)
                    assert list(idx[pos]) == want, (shape, axis, k, largest, pos)
                    np.testing.assert_array_equal(vals[pos], moved[pos][want])


@pytest.mark.parametrize("backend", BACKENDS)
def test_topk_errors(backend):
    eng = tandem.Engine(backend)
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    for k in (0, 5, -1):
        with pytest.raises(tandem.ValueError, match="1 <= k <= 4"):
            eng.topk(x, k)
    with pytest.raises(tandem.AxisError):
        eng.topk(x, 1, axis=2)
    with pytest.raises(np.exceptions.AxisError if hasattr(np, "exceptions") else np.AxisError):
        eng.argsort(x, axis=-3)
    with pytest.raises(tandem.ValueError, match="0-d"):
        eng.argsort(np.float32(3))
    with pytest.raises(tandem.TypeError):
        eng.argsort(np.array(["a", "b"]))
