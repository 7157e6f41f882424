"""Core's op definitions: an internal plugin, registered like any external one.

Each module here defines one op family and exposes ``register(registry)``;
its CPU kernels live in ``oar_kernels_cpu.kernels.<same module name>`` and its
tests in ``tests/kernels_cpu/test_<same module name>.py``.
"""

from __future__ import annotations

import importlib
import pkgutil

from oar.hookspecs import hookimpl


def op_modules() -> list:
    """Every op-family module in this package, in name order."""
    return sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_"))


@hookimpl
def oar_register_ops(registry) -> None:
    for name in op_modules():
        registry.current_family = name  # kernel plugins may register a family's kernels lazily
        try:
            importlib.import_module(f"{__name__}.{name}").register(registry)
        finally:
            registry.current_family = None
