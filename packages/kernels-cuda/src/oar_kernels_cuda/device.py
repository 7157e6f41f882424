"""The ``cuda`` device: cupy arrays, copies through the host, one current device per place."""

from __future__ import annotations

from typing import Any

import numpy as np
from oar.api import Device

from oar_kernels_cuda import runtime


def _cupy() -> Any:
    cupy = runtime.cupy_module()
    if cupy is None or not runtime.available():
        raise RuntimeError(f"the cuda device is not available: {runtime.unavailable_reason()}")
    return cupy


def from_host(array: Any, device_id: int = 0) -> Any:
    """Copy a host array to GPU ``device_id`` (an array already there is returned as it is)."""
    cupy = _cupy()
    if isinstance(array, cupy.ndarray) and array.device.id == device_id:
        return array
    with cupy.cuda.Device(device_id):
        return cupy.asarray(np.asarray(array) if not isinstance(array, cupy.ndarray) else array)


def to_host(array: Any) -> Any:
    """Copy a device array to host memory (other values are returned unchanged)."""
    cupy = runtime.cupy_module()
    if cupy is not None and isinstance(array, cupy.ndarray):
        return cupy.asnumpy(array)
    return array


def synchronize(device_id: int = 0) -> None:
    cupy = _cupy()
    with cupy.cuda.Device(device_id):
        cupy.cuda.get_current_stream().synchronize()


def make_device() -> Device:
    return Device(
        name="cuda",
        available=runtime.available,
        count=runtime.device_count,
        get_xp=_cupy,
        from_host=from_host,
        to_host=to_host,
        synchronize=synchronize,
        unavailable_reason=runtime.unavailable_reason,
    )
