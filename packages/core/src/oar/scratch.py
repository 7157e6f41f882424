"""Reusable scratch buffers for kernel temporaries (column matrices, GEMM products, transformed
tiles); kernel plugins reach them as ``oar.api.scratch`` and ``oar.api.release_scratch``.

The conv kernels fill a batch chunk of columns, multiply it, and drop it, many
times a step; :func:`scratch` hands out the same memory each time instead of a
fresh allocation (which, for buffers of megabytes, costs page faults on every
step). Buffers are per thread (the data-parallel executor runs one thread per
place) and per array module, and only buffers up to :data:`MAX_BYTES` are kept:
a larger request gets a fresh array.

A scratch array is valid until the next :func:`scratch` call with the same
``role`` on the same thread: use it only for temporaries, never as a kernel output.
"""

from __future__ import annotations

import math
import threading
from typing import Any

MAX_BYTES = 16 << 20

_local = threading.local()


def scratch(xp: Any, role: str, shape: tuple, dtype) -> Any:
    """An uninitialised C-contiguous ``shape`` array of ``dtype``, reusing ``role``'s buffer."""
    size = math.prod(shape)
    itemsize = xp.dtype(dtype).itemsize
    if size * itemsize > MAX_BYTES:
        return xp.empty(shape, dtype)
    pool = getattr(_local, "pool", None)
    if pool is None:
        pool = _local.pool = {}
    key = (id(xp), role, xp.dtype(dtype).str)
    buf = pool.get(key)
    if buf is None or buf.size < size:
        buf = pool[key] = xp.empty(max(size, 1), dtype)
    return buf[:size].reshape(shape)


def release_scratch() -> None:
    """Drop this thread's scratch buffers."""
    _local.pool = {}
