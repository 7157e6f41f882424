"""Numpy-only kernels (``generic=False``: LoD walks, dynamic programming, string work) on a
device: inputs copied to the host, the numpy kernel run there, outputs copied back.

One copy each way per call is the price of full op coverage; these ops are the control-heavy
ones (CRF, CTC, edit distance, sequence bookkeeping) where a GPU would gain little. A fast path
registered at a higher priority replaces a fallback op by op.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from oar.api import LoDTensor, SelectedRows

FALLBACK_PRIORITY = -10  # below the generic kernels (0) and the fused fast paths (10)


def _device_id(values: Any) -> int:
    for v in values:
        for item in v if isinstance(v, (list, tuple)) else (v,):
            arr = item._array if isinstance(item, LoDTensor) else item
            dev = getattr(arr, "device", None)
            if dev is not None and hasattr(dev, "id"):
                return int(dev.id)
    return 0


class _Mover:
    def __init__(self, to_host: Callable, from_host: Callable) -> None:
        self.to_host_array = to_host
        self.from_host_array = from_host

    def to_host(self, value: Any) -> Any:
        if value is None:
            return None
        if isinstance(value, (list, tuple)):
            return type(value)(self.to_host(v) for v in value)
        if isinstance(value, LoDTensor):
            return LoDTensor(np.asarray(value) if value._array is not None else None, value.lod())
        if isinstance(value, SelectedRows):
            return SelectedRows(value.rows(), value.height(), self.to_host(value.value))
        return self.to_host_array(value)

    def from_host(self, value: Any, device_id: int) -> Any:
        if value is None or isinstance(value, (str, bytes, int, float)):
            return value
        if isinstance(value, (list, tuple)):
            return type(value)(self.from_host(v, device_id) for v in value)
        if isinstance(value, LoDTensor):
            array = None if value._array is None else self.from_host_array(value._array, device_id)
            return LoDTensor(array, value.lod())
        if isinstance(value, SelectedRows):
            return SelectedRows(
                value.rows(), value.height(), self.from_host(value.value, device_id)
            )
        if isinstance(value, np.ndarray) or np.isscalar(value):
            return self.from_host_array(np.asarray(value), device_id)
        return value


def host_kernel(fn: Callable, to_host: Callable, from_host: Callable) -> Callable:
    """``fn`` (a numpy kernel) callable with device arrays: inputs to host, outputs back."""
    mover = _Mover(to_host, from_host)

    def run_on_host(inputs: dict, attrs: dict, *args: Any, **kwargs: Any) -> dict:
        device_id = _device_id(inputs.values())
        outs = fn({k: mover.to_host(v) for k, v in inputs.items()}, attrs, *args, **kwargs)
        return {k: mover.from_host(v, device_id) for k, v in outs.items()}

    run_on_host.__name__ = f"host_{getattr(fn, '__name__', 'kernel')}"
    run_on_host.__qualname__ = run_on_host.__name__
    run_on_host.__wrapped__ = fn  # type: ignore[attr-defined]
    return run_on_host


def register_host_fallbacks(
    registry: Any,
    device: str,
    to_host: Callable,
    from_host: Callable,
    priority: int = FALLBACK_PRIORITY,
) -> None:
    """Register every numpy-only kernel of oar-kernels-cpu for ``device`` through the host
    (lazily, per op family, like the generic kernels)."""
    from oar_kernels_cpu import register_numpy_only_kernels

    register_numpy_only_kernels(
        registry, device, lambda fn: host_kernel(fn, to_host, from_host), priority=priority
    )
