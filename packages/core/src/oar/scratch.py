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
Kernels of one kind share role names (:data:`ROLES`), so that a thread keeps one
buffer per role, sized by the largest use, rather than one per kernel: a chunk of work
uses each role once, and a thread runs one chunk at a time.

What is kept is bounded by recent use: every :data:`REVIEW_CALLS` calls on a thread, a
buffer no call asked for since the last review is dropped, and one more than twice the
largest recent request is dropped to be allocated again at the size now needed. So a
thread that ran a large model once does not keep its buffers for a small one. A dropped
buffer asked for again at a larger size than the review saw means the window was shorter
than the work's cycle (a ResNet step makes some 2500 calls, its first layers' buffers the
largest): that thread's reviews then come twice as far apart, up to :data:`MAX_REVIEW_CALLS`.
:func:`release_scratch` drops the buffers of every thread (the kernel pool's too);
:func:`scratch_bytes` is what all threads keep.
"""

from __future__ import annotations

import math
import threading
import weakref
from typing import Any

MAX_BYTES = 16 << 20
#: scratch calls on a thread between two reviews of its buffers (a MNIST CNN train step
#: makes about 70)
REVIEW_CALLS = 512
#: the longest review interval a thread's window may grow to
MAX_REVIEW_CALLS = 1 << 16

#: the role names kernels share (a chunk of work uses each at most once): the input side
#: (im2col columns, Winograd input tiles), the input rearranged (padded planes), GEMM
#: products, the output side (output gradient columns, output tiles), col2im sums, and
#: small filter-gradient products
ROLES = ("cols", "planes", "prod", "dy", "acc", "dw")


class _Pool:
    """One thread's buffers and what was asked of each since the last review."""

    __slots__ = ("__weakref__", "buffers", "calls", "dropped", "interval", "used")

    def __init__(self) -> None:
        self.buffers: dict = {}
        self.used: dict = {}  # key -> the largest request (elements) since the last review
        # key -> its largest request in the window of the review that dropped its buffer
        self.dropped: dict = {}
        self.calls = 0
        self.interval = REVIEW_CALLS

    def review(self) -> None:
        used = self.used
        kept, dropped = {}, {}
        for k, b in self.buffers.items():
            u = used.get(k, 0)
            if 0 < u and b.size <= 2 * u:
                kept[k] = b
            else:
                dropped[k] = u
        self.buffers, self.used = kept, {}
        self.dropped.update(dropped)
        self.calls = 0

    def regrown(self, key, size: int) -> None:
        """``key``'s buffer is allocated for ``size`` elements (none kept, or too small)."""
        seen = self.dropped.get(key)
        if seen is not None and size > seen:  # a review dropped what is needed again
            del self.dropped[key]
            self.interval = min(2 * self.interval, MAX_REVIEW_CALLS)

    def nbytes(self) -> int:
        return sum(b.nbytes for b in list(self.buffers.values()))


_local = threading.local()
_pools: weakref.WeakSet = weakref.WeakSet()  # every live thread's pool
_pools_lock = threading.Lock()


def _new_pool() -> _Pool:
    pool = _local.pool = _Pool()
    with _pools_lock:
        _pools.add(pool)
    return pool


def scratch(xp: Any, role: str, shape: tuple, dtype) -> Any:
    """An uninitialised C-contiguous ``shape`` array of ``dtype``, reusing ``role``'s buffer."""
    size = math.prod(shape)
    dt = xp.dtype(dtype)
    if size * dt.itemsize > MAX_BYTES:
        return xp.empty(shape, dt)
    pool = getattr(_local, "pool", None)
    if pool is None:
        pool = _new_pool()
    key = (id(xp), role, dt.str)
    buf = pool.buffers.get(key)
    if buf is None or buf.size < size:
        if pool.dropped:
            pool.regrown(key, size)
        buf = pool.buffers[key] = xp.empty(max(size, 1), dt)
    used = pool.used
    if used.get(key, 0) < size:
        used[key] = size
    pool.calls += 1
    if pool.calls >= pool.interval:
        pool.review()  # the array handed out below keeps its buffer alive meanwhile
    return buf[:size].reshape(shape)


def release_scratch() -> None:
    """Drop the scratch buffers of every thread, and start their reviews afresh (arrays handed
    out stay valid: each keeps its memory until it is gone)."""
    with _pools_lock:
        pools = list(_pools)
    for pool in pools:
        pool.buffers = {}
        pool.used = {}
        pool.dropped = {}
        pool.calls = 0
        pool.interval = REVIEW_CALLS


def scratch_bytes() -> int:
    """Bytes of scratch buffers all threads keep now."""
    with _pools_lock:
        pools = list(_pools)
    return sum(p.nbytes() for p in pools)
