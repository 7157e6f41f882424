"""oar's CPU device and array-generic kernels, registered through the ``oar`` entry point.

Kernels are plain functions ``kernel(inputs, attrs) -> {slot: array}`` written
against ``xp`` (numpy here); :func:`register_generic_kernels` lets another
device plugin (e.g. a CUDA one) register the same kernels with its own array
module and override only its fast paths.
"""

from __future__ import annotations

__version__ = "0.1.0"

from oar_kernels_cpu.generic import register_generic_kernels, register_numpy_only_kernels
from oar_kernels_cpu.kernels import all_kernels, kernels_for

__all__ = [
    "all_kernels",
    "kernels_for",
    "register_generic_kernels",
    "register_numpy_only_kernels",
    "__version__",
]
