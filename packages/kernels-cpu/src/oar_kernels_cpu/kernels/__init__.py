"""Array-generic kernels, one module per op family (same module names as ``oar.ops``).

A module declares kernels with the :func:`kernel` decorator and computes with
``xp = array_module(__name__)``: numpy when the module is imported (the ``cpu``
device), another numpy-like module (cupy) when ``oar.kernel_family``
instantiates it for another device. Kernels that need numpy-only APIs say
``generic=False``. ``np.`` is used only for dtype metadata (see
``tests/kernels_cpu/test_generic_kernels.py``).
"""

from __future__ import annotations

import pkgutil

from oar.api import array_module, family_kernels, kernel

FLOATS = ("float16", "float32", "float64")
NUMERIC = FLOATS + ("int8", "int16", "int32", "int64", "uint8")


def kernel_modules() -> list:
    """The family modules of this package (``oar_kernels_cpu.kernels.<family>``), in name order."""
    return sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_"))


def all_kernels(xp=None, tag: str | None = None) -> list:
    """Every declared kernel, for array module ``xp`` (default numpy: the modules as imported)."""
    return [k for name in kernel_modules() for k in family_kernels(f"{__name__}.{name}", xp, tag)]


def kernels_for(op_type: str) -> list:
    """The numpy kernels declared for ``op_type``."""
    return [k for k in all_kernels() if k.op_type == op_type]


__all__ = ["FLOATS", "NUMERIC", "array_module", "kernel", "kernel_modules", "all_kernels"]
