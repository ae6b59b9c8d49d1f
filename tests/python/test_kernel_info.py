"""tandem.kernel_info(backend): a backend's kernel tables without an engine or its device, the same dicts
as Engine.kernel_info(). The CUDA tables come from the CUDA module wherever it loads, with or without a
GPU; where it cannot be loaded (or the build has no CUDA) they raise tandem.Error with the reason."""
import pytest

import tandem

CUDA_USABLE = {b["name"]: b["usable"] for b in tandem.backend_status()}["cuda"]


def module_loads():
    """Whether the CUDA module loads here (reading its tables loads it, with or without a GPU)."""
    try:
        tandem.kernel_info("cuda")
        return True
    except tandem.Error:
        return False


CUDA_MODULE = module_loads()


def check_shape(tables):
    """The tables of a backend read without a device: 'auto' first, distinct names, the element types and ops
    of the module's tables, a precision for each type, and runs_here where the kernel needs nothing beyond
    the backend (requirement empty)."""
    assert set(tables) == {"reduce", "matmul"}
    for kind, kernels in tables.items():
        assert kernels[0]["name"] == "auto"
        assert kernels[0]["per_row_col"] == (kind == "reduce")
        assert kernels[0]["native_16bit"] == any(k["auto_pick"] and k["native_16bit"] for k in kernels)
        names = [k["name"] for k in kernels]
        assert len(set(names)) == len(names) > 1
        for k in kernels:
            assert set(k["dtypes"]) <= set(tandem.dtypes) and set(k["ops"]) <= set(tandem.ops), k["name"]
            assert list(k["precisions"]) == k["dtypes"], k["name"]
            assert k["runs_here"] is (k["requirement"] == ""), f"{k['name']}: {k['requirement']!r}, {k['runs_here']}"


def same_but_runs_here(device_free, engine):
    """The tables read without a device equal the engine's in every field but runs_here, which only the
    engine's device can answer: there it is true at least wherever the kernel needs nothing more."""
    def without(tables):
        return {kind: [{f: v for f, v in k.items() if f != "runs_here"} for k in ks] for kind, ks in tables.items()}

    assert without(device_free) == without(engine)
    for ks in engine.values():
        for k in ks:
            assert k["runs_here"] or k["requirement"], k["name"]


def test_cpu_equals_engine():
    tables = tandem.kernel_info("cpu")
    check_shape(tables)
    same_but_runs_here(tables, tandem.Engine("cpu").kernel_info())


def test_auto_equals_default_engine():
    same_but_runs_here(tandem.kernel_info("auto"), tandem.Engine().kernel_info())


@pytest.mark.skipif(not CUDA_MODULE, reason="the CUDA module does not load here")
def test_cuda_from_module_with_or_without_gpu():
    tables = tandem.kernel_info("cuda")
    check_shape(tables)
    assert tables != tandem.kernel_info("cpu")
    if CUDA_USABLE:
        same_but_runs_here(tables, tandem.Engine("cuda").kernel_info())


@pytest.mark.skipif(CUDA_MODULE, reason="the CUDA module loads here")
def test_cuda_without_module_raises():
    with pytest.raises(tandem.Error, match="CUDA") as e:
        tandem.kernel_info("cuda")
    assert not isinstance(e.value, (tandem.ValueError, tandem.TypeError))  # a failure, not a bad argument


def test_bad_backend_name():
    with pytest.raises(tandem.ValueError, match="tandem.kernel_info: backend must be"):
        tandem.kernel_info("tpu")
