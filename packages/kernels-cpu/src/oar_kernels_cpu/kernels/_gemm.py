"""Matrix products of the kernels: at one BLAS thread, the large ones split across the kernel
thread pool.

An OpenBLAS call on several threads leaves its worker threads spinning for tens of
milliseconds after it returns (measured here: about 9 ms of a second core per call), so the
next kernel's pool threads, or the next op, find that core taken: the seed's MNIST CNN step
took 50% more CPU time at 2 threads than at 1, for no gain in wall time. So every product here
runs with OpenBLAS at one thread (``oar.api.with_one_blas_thread``), and, when the pool has
several threads, a product of at least :data:`SPLIT_MACS` multiply-adds is cut into row
pieces (column pieces when it is wider than tall) that the pool runs at once. The cut depends
on the shapes only, and pieces start at multiples of :data:`ALIGN` rows, the BLAS
micro-kernels' tile boundaries: each output element is then summed exactly as in the whole
product (bit for bit the same, checked on OpenBLAS's float32 and float64 kernels), so results
do not depend on the thread count. On one thread a product is one call (no piece overhead).
"""

from __future__ import annotations

import math
from typing import Any

from oar.api import with_one_blas_thread

from oar_kernels_cpu.kernels import _parallel

#: multiply-adds from which a product is split across the pool
SPLIT_MACS = 1 << 22
#: about this many multiply-adds per piece, in at most :data:`MAX_PIECES` pieces
PIECE_MACS = 1 << 23
MAX_PIECES = 8
#: a piece's rows (or columns) are a multiple of this (BLAS micro-kernels work in blocks)
ALIGN = 32


def _host(a: Any) -> bool:
    """Whether ``a`` lives in host memory (numpy and its subclasses, not cupy). Looked up on the
    type: ``a.__array_interface__`` builds a dict per access (about 3 µs)."""
    return getattr(type(a), "__array_interface__", None) is not None


def matmul(xp: Any, a: Any, b: Any) -> Any:
    """``xp.matmul(a, b)``, at one BLAS thread and, when large, in pieces on the pool."""
    if not (_host(a) and _host(b)):
        return xp.matmul(a, b)  # device arrays (cupy): the device's own library
    if a.ndim == 2 and b.ndim == 2:
        return _matmul_2d(xp, a, b)
    if a.ndim > 2 and a.shape[:-2] == b.shape[:-2]:
        return _matmul_batched(xp, a, b)
    return with_one_blas_thread(xp.matmul, a, b)


def _cuts(length: int, macs: int, align: int) -> list:
    """Fixed pieces of ``length`` for a product of ``macs`` multiply-adds (one when small, or
    when the pool has one thread)."""
    if macs < SPLIT_MACS or _parallel.parallel_threads() < 2:
        return [(0, length)]
    count = min(MAX_PIECES, max(1, macs // PIECE_MACS), max(1, length // align))
    if count < 2:
        return [(0, length)]
    step = -(-math.ceil(length / count) // align) * align
    return [(i, min(i + step, length)) for i in range(0, length, step)]


def _matmul_2d(xp: Any, a: Any, b: Any) -> Any:
    m, n = a.shape[0], b.shape[1]
    macs = m * a.shape[1] * n
    by_rows = m >= n
    cuts = _cuts(m if by_rows else n, macs, ALIGN)
    if len(cuts) == 1:
        return with_one_blas_thread(xp.matmul, a, b)
    out = xp.empty((m, n), xp.result_type(a.dtype, b.dtype))

    def rows(lo: int, hi: int) -> None:
        xp.matmul(a[lo:hi], b, out=out[lo:hi])

    def cols(lo: int, hi: int) -> None:
        xp.matmul(a, b[:, lo:hi], out=out[:, lo:hi])

    _parallel.for_pieces(rows if by_rows else cols, cuts, blas=True)
    return out


def _matmul_batched(xp: Any, a: Any, b: Any) -> Any:
    lead = a.shape[0]
    macs = math.prod(a.shape) * b.shape[-1]
    cuts = _cuts(lead, macs, 1)
    if len(cuts) == 1:
        return with_one_blas_thread(xp.matmul, a, b)
    out = xp.empty(a.shape[:-1] + b.shape[-1:], xp.result_type(a.dtype, b.dtype))

    def run(lo: int, hi: int) -> None:
        xp.matmul(a[lo:hi], b[lo:hi], out=out[lo:hi])

    _parallel.for_pieces(run, cuts, blas=True)
    return out
