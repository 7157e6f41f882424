"""oar's CPU device and array-generic kernels, registered through the ``oar`` entry point.

Kernels are plain functions ``kernel(inputs, attrs) -> {slot: array}`` written
against ``xp`` (numpy here); :func:`register_generic_kernels` lets another
device plugin (e.g. a CUDA one) register the same kernels with its own array
module and override only its fast paths.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_PUBLIC = {
    "register_generic_kernels": "oar_kernels_cpu.generic",
    "register_numpy_only_kernels": "oar_kernels_cpu.generic",
    "all_kernels": "oar_kernels_cpu.kernels",
    "kernels_for": "oar_kernels_cpu.kernels",
}


def __getattr__(name: str) -> Any:
    # Serves the public names while ``import oar`` below is still loading the plugins: another
    # plugin's module may say ``from oar_kernels_cpu import register_generic_kernels`` then.
    if name in _PUBLIC:
        return getattr(importlib.import_module(_PUBLIC[name]), name)
    raise AttributeError(f"module 'oar_kernels_cpu' has no attribute {name!r}")


# oar first: importing it loads every plugin, this one included, so a first import of one of
# this package's modules (``import oar_kernels_cpu.kernels.conv``) must not leave this
# package's modules half-initialised while the plugin manager imports them.
import oar  # noqa: E402, F401

from oar_kernels_cpu.generic import (  # noqa: E402
    register_generic_kernels,
    register_numpy_only_kernels,
)
from oar_kernels_cpu.kernels import all_kernels, kernels_for  # noqa: E402

__all__ = [
    "all_kernels",
    "kernels_for",
    "register_generic_kernels",
    "register_numpy_only_kernels",
    "__version__",
]
