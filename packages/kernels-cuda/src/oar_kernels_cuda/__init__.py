"""oar's CUDA device: cupy arrays on NVIDIA GPUs, registered through the ``oar`` entry point.

Every array-generic kernel of oar-kernels-cpu is registered for ``cuda`` with cupy bound
(:func:`register_device_kernels`); numpy-only kernels run on the host with one copy each way
(:mod:`oar_kernels_cuda.host_fallback`); fused cupy kernels override the hottest ops
(:mod:`oar_kernels_cuda.fused`). Without cupy or a GPU the plugin still imports and the
device reports itself unavailable.
"""

from __future__ import annotations

__version__ = "0.1.0"

# oar first: importing it loads every plugin, this one included, so a first import of one of
# this package's modules must not leave them half-initialised while the plugin manager
# imports them.
import oar  # noqa: F401

from oar_kernels_cuda.registration import register_device_kernels

__all__ = ["register_device_kernels", "__version__"]
