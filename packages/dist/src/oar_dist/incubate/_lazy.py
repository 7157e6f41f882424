"""Subpackages resolved on attribute access (``fluid.incubate.fleet.parameter_server``), as in Fluid."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_submodules(package: str) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package`` that imports ``package.<name>`` on first use."""

    def __getattr__(name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return importlib.import_module(f"{package}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{package}.{name}":
                raise
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None

    return __getattr__
