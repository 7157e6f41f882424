"""The one function that gives a device every op: generic kernels with the device's array
module, host fallbacks for the numpy-only ones, and (for cupy) the fused fast paths.

The cuda plugin calls it for ``cuda``; the op conformance suite calls it for its ``checking``
device, so the suite exercises this very seam on machines without a GPU.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from oar_kernels_cuda.host_fallback import FALLBACK_PRIORITY, register_host_fallbacks


def register_device_kernels(
    registry: Any,
    device: str,
    to_host: Callable,
    from_host: Callable,
    xp: Any = None,
    *,
    fused: bool = False,
) -> None:
    """Register every oar-kernels-cpu kernel for ``device``.

    ``xp``: the device's array module (default: the registered device's, resolved lazily).
    ``fused``: also register the cupy fast paths (only meaningful when ``xp`` is cupy).
    """
    from oar_kernels_cpu import register_generic_kernels

    register_generic_kernels(registry, device, xp, priority=0)
    register_host_fallbacks(registry, device, to_host, from_host, priority=FALLBACK_PRIORITY)
    if fused:
        from oar_kernels_cuda.fused import register_fused_kernels

        register_fused_kernels(registry, device)
