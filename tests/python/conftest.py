"""The engine fixture of the NumPy-conventions tests: one engine of each usable backend (the CPU always,
CUDA where a GPU is usable), shared by the tests of a module."""
import pytest

import tandem
from numpy_conventions import BACKENDS


@pytest.fixture(params=BACKENDS, scope="module")
def eng(request):
    return tandem.Engine(request.param)
