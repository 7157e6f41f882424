"""numpy kernels, one module per op family (same module names as ``oar.ops``).

A module declares kernels with the :func:`kernel` decorator; the plugin
registers every declared kernel for the ``cpu`` device.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Sequence

import attrs

FLOATS = ("float16", "float32", "float64")
NUMERIC = FLOATS + ("int8", "int16", "int32", "int64", "uint8")


@attrs.frozen
class KernelSpec:
    op_type: str
    dtypes: tuple | None
    fn: Callable
    flags: dict


_declared: list = []


def kernel(op_type: str, dtypes: Sequence[str] | None = None, **flags) -> Callable:
    """Declare ``fn`` as the numpy kernel of ``op_type`` (for ``dtypes``; None = any)."""

    def deco(fn: Callable) -> Callable:
        _declared.append(KernelSpec(op_type, tuple(dtypes) if dtypes else None, fn, flags))
        return fn

    return deco


def kernel_modules() -> list:
    return sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_"))


def all_kernels() -> list:
    """Every declared kernel (importing the kernel modules on first call)."""
    for name in kernel_modules():
        importlib.import_module(f"{__name__}.{name}")
    return list(_declared)


def kernels_for(op_type: str) -> list:
    return [k for k in all_kernels() if k.op_type == op_type]
