# Type stubs of the extension module `tandem` (python/module.cpp). The docstrings there are the reference.
import builtins

import numpy.exceptions
from typing import Any, Optional, Sequence

ops: tuple[str, ...]
"""The reductions, one Engine method each, in the op table's order."""
dtypes: tuple[str, ...]
"""NumPy's names of the element types tandem takes, in the element-type table's order."""
op_info: dict[str, dict[str, Any]]
"""Each op's row: {'result': 'sum' | 'value' | 'mean' | 'index', 'empty': 'zero' | 'error', 'dtype': whether
its method takes dtype=}."""

__version__: str
"""tandem's version, e.g. "0.1.0"."""

class Error(RuntimeError):
    """Every error tandem reports: what went wrong and what to do."""

class ValueError(Error, builtins.ValueError):
    """A value or shape tandem does not accept (also a ValueError)."""

class AxisError(numpy.exceptions.AxisError, ValueError):
    """An axis out of range (also NumPy's AxisError and a ValueError)."""

class TypeError(Error, builtins.TypeError):
    """An element type or argument type tandem does not accept (also a TypeError)."""

def info() -> str:
    """What `tandem info` prints: the backends, whether each is usable and why, and what 'auto' picks."""

def backend_status() -> list[dict[str, Any]]:
    """Every backend of this build: dicts of name, label, compiled_in, usable, reason, devices, module."""

def kernel_info(backend: str) -> dict[str, list[dict[str, Any]]]:
    """What Engine(backend).kernel_info() gives, read without an engine and without the backend's device
    (backend: a name of backend_status(), or 'auto'); raises tandem.Error where the backend is not compiled in
    or its module cannot be loaded."""

class Engine:
    def __init__(self, backend: str = "auto", device: Optional[int] = None,
                 devices: Optional[Sequence[int]] = None) -> None: ...
    @property
    def backend(self) -> str: ...
    def device_info(self) -> dict[str, Any]: ...
    def devices(self) -> list[dict[str, Any]]: ...
    def reduce_kernels(self) -> list[str]: ...
    def matmul_kernels(self) -> list[str]: ...
    def kernel_info(self) -> dict[str, list[dict[str, Any]]]: ...
    def __repr__(self) -> str: ...
    def topk(self, x: Any, k: int, axis: int = -1, largest: bool = True) -> tuple[Any, Any]: ...
    def argsort(self, x: Any, axis: int = -1) -> Any: ...
    def sum(self, x: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
            initial: Any = None, *, where: Any = True, kernel: str = "auto", deterministic: bool = False) -> Any: ...
    def min(self, x: Any, axis: Any = None, out: Any = None, keepdims: bool = False, initial: Any = None, *,
            where: Any = True, kernel: str = "auto", deterministic: bool = False) -> Any: ...
    def max(self, x: Any, axis: Any = None, out: Any = None, keepdims: bool = False, initial: Any = None, *,
            where: Any = True, kernel: str = "auto", deterministic: bool = False) -> Any: ...
    def mean(self, x: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False, *,
             where: Any = True, kernel: str = "auto", deterministic: bool = False) -> Any: ...
    def argmin(self, x: Any, axis: Optional[int] = None, out: Any = None, keepdims: bool = False, *,
               kernel: str = "auto", deterministic: bool = False) -> Any: ...
    def argmax(self, x: Any, axis: Optional[int] = None, out: Any = None, keepdims: bool = False, *,
               kernel: str = "auto", deterministic: bool = False) -> Any: ...
    def sumsq(self, x: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
              initial: Any = None, *, where: Any = True, kernel: str = "auto", deterministic: bool = False) -> Any: ...
    def prod(self, x: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
             initial: Any = None, *, where: Any = True, kernel: str = "auto", deterministic: bool = False) -> Any: ...
    def var(self, x: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: float = 0,
            keepdims: bool = False, *, where: Any = True, correction: Optional[float] = None, kernel: str = "auto",
            deterministic: bool = False) -> Any: ...
    def std(self, x: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: float = 0,
            keepdims: bool = False, *, where: Any = True, correction: Optional[float] = None, kernel: str = "auto",
            deterministic: bool = False) -> Any: ...
    def matmul(self, a: Any, b: Any, out: Any = None, trans_a: bool = False, trans_b: bool = False,
               alpha: float = 1.0, beta: float = 0.0, kernel: str = "auto", deterministic: bool = False,
               precision: str = "full") -> Any: ...
    def matmul_grouped(self, a: Any, b: Any, group_sizes: Any, out: Any = None, trans_a: bool = False,
                       trans_b: bool = False, alpha: float = 1.0, beta: float = 0.0, kernel: str = "auto",
                       deterministic: bool = False, precision: str = "full") -> Any: ...
