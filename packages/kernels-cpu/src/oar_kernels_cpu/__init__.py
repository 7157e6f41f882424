"""oar's CPU device and numpy kernels, registered through the ``oar`` entry point.

Kernels are plain functions ``kernel(inputs, attrs) -> {slot: array}`` written
against numpy; :func:`kernels_for` lets another plugin (e.g. a CUDA one) reuse
the array-generic ones.
"""

from __future__ import annotations

__version__ = "0.1.0"

from oar_kernels_cpu.kernels import all_kernels, kernels_for  # noqa: E402

__all__ = ["all_kernels", "kernels_for", "__version__"]
