"""Matrix products of the kernels: small ones at one BLAS thread, large ones at OpenBLAS's
full thread count, or, under ``FLAGS_cpu_deterministic``, split across the kernel thread pool.

An OpenBLAS call on several threads leaves its worker threads spinning for milliseconds after
it returns (measured here: about 9 ms of a second core per call), so the next kernel's pool
threads, or the next op, find that core taken: the seed's MNIST CNN step took 50% more CPU
time at 2 threads than at 1, for no gain in wall time. So a product below
:data:`THREADED_MACS` multiply-adds runs with OpenBLAS at one thread
(``oar.api.with_one_blas_thread``); none of the MNIST CNN's products is that large.

A product of at least :data:`THREADED_MACS` multiply-adds is worth the spin: on the main
thread it is one call with OpenBLAS at :func:`_parallel.parallel_threads` threads (oar's thread
settings: ``set_cpu_math_library_num_threads``, ``OMP_NUM_THREADS``, else the cores), whose
workers spin between their blocks and finish a 128x784x512 product well before oar's own pool
can (546 against 650 µs; 1006 at one thread), on a quiet machine; on a busy one they wait
for each other and lose 5 to 15 times over, so each shape's large products run whichever way has
been faster for them lately (:mod:`._gemm_route`). OpenBLAS's threads sum an element in another order than
one thread does once the inner dimension passes 512, so such results differ in their last
bits between thread counts. ``FLAGS_cpu_deterministic`` (Fluid's flag for "CPU results that
do not depend on the summing order") keeps them equal: the large product then runs at one
BLAS thread, cut into row pieces (column pieces when it is wider than tall) that the pool runs
at once. The cut depends on the shapes only, and pieces start at multiples of :data:`ALIGN`
rows, the BLAS micro-kernels' tile boundaries: each output element is then summed exactly as
in the whole product (bit for bit the same, checked on OpenBLAS's float32 and float64
kernels). Off the main thread (data-parallel places, each with its share of the cores) a
product is one call at the BLAS count in force there, as before.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Sequence
from typing import Any

from oar.api import cpu_deterministic, with_blas_threads, with_one_blas_thread

from oar_kernels_cpu.kernels import _gemm_route, _parallel

#: multiply-adds below which OpenBLAS runs a product on one thread by itself (its SMP
#: threshold is 4 x 65536): such a product is called as it is, with no thread-count toggle
BLAS_SERIAL_MACS = 1 << 16
#: multiply-adds from which a product runs on OpenBLAS's threads (unless deterministic): at
#: 4M two threads gained nothing here (64x256x256: 83 against 90 µs, 128x256x128: 98 against
#: 87), from 8M they start to (64x512x256: 141 against 173 µs; 64x800x500: 349 against 527)
THREADED_MACS = int(os.environ.get("OAR_BLAS_THREADED_MACS", 1 << 23))
#: multiply-adds from which a product is split across the pool (``FLAGS_cpu_deterministic``)
SPLIT_MACS = 1 << 22
#: at least this many multiply-adds per piece, in a power of two of pieces (they share out
#: evenly over 2 or 4 threads), at most :data:`MAX_PIECES`: each piece repacks the shared
#: operand, so fewer, larger pieces waste less
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
    return matmuls(xp, [(a, b)])[0]


def matmuls(xp: Any, pairs: Sequence[tuple]) -> list:
    """``[xp.matmul(a, b) for a, b in pairs]``: the large products at OpenBLAS's full thread
    count, one after the other, or in pieces on the pool (whichever has been faster for these
    shapes lately, :mod:`._gemm_route`); the others at one BLAS thread, their pieces (a product
    not worth splitting is one piece) in one round on the pool, so independent products (a
    gradient's dX and dW) also run at once."""
    sizes = [_macs(a, b) for a, b in pairs]
    threads = _parallel.parallel_threads()  # once per call: each lookup reads the environment
    if max(sizes) < THREADED_MACS:
        return _run(xp, pairs, sizes, 1, threads)
    blas_threads = 1 if cpu_deterministic() else threads
    if blas_threads < 2:
        return _run(xp, pairs, sizes, 1, threads)
    way = _gemm_route.fixed_way()
    if way is not None:
        return _run(xp, pairs, sizes, blas_threads if way == _gemm_route.OPENBLAS else 1, threads)
    key = tuple([(a.shape, b.shape, a.dtype.char) for a, b in pairs])
    route = _gemm_route.route_for(key)
    way = route.pick()
    start = time.perf_counter()
    out = _run(xp, pairs, sizes, blas_threads if way == _gemm_route.OPENBLAS else 1, threads)
    route.record(way, time.perf_counter() - start, sum(sizes))
    return out


def one_blas_thread_below(macs: int, fn: Any, *args: Any) -> Any:
    """``fn(*args)`` at one BLAS thread when its largest product has fewer than
    :data:`THREADED_MACS` multiply-adds (OpenBLAS's spinning workers would only slow the next
    calls), else at the BLAS count in force. For kernels that loop over many small products,
    such as the recurrent ones' time steps."""
    if macs < THREADED_MACS:
        return with_one_blas_thread(fn, *args)
    return fn(*args)


def _macs(a: Any, b: Any) -> int:
    """The product's multiply-adds, or 0 for one that runs as it is (tiny, or device arrays)."""
    macs = a.size * (b.shape[-1] if b.ndim > 1 else 1)
    return macs if macs >= BLAS_SERIAL_MACS and _host(a) and _host(b) else 0


def _run(xp: Any, pairs: Sequence[tuple], sizes: list, blas_threads: int, threads: int) -> list:
    """The products, those of at least :data:`THREADED_MACS` at ``blas_threads`` OpenBLAS
    threads when that is more than one, the rest at one BLAS thread on the pool (``threads``:
    the pool's thread count)."""
    if blas_threads > 1 and min(sizes) >= THREADED_MACS:
        return with_blas_threads(blas_threads, _each, xp, pairs)  # all on OpenBLAS's threads
    if threads < 2 or (blas_threads < 2 and sum(sizes) < SPLIT_MACS):
        # nothing to split (one pool thread, or too little work to hand to another thread):
        # the products as they are, at one BLAS thread, without the pieces' bookkeeping
        # (10-30 µs a product here)
        return with_one_blas_thread(_each, xp, pairs)
    results: list = [None] * len(pairs)
    tasks: list = []
    threaded: list = []
    total = 0
    for i, (a, b) in enumerate(pairs):
        macs = sizes[i]
        if not macs:
            results[i] = xp.matmul(a, b)  # tiny (OpenBLAS stays serial), or device arrays
        elif macs >= THREADED_MACS and blas_threads > 1:
            threaded.append(i)
        else:
            results[i], pieces = _pieces(xp, a, b, threads)
            tasks.extend(pieces)
            total += macs
    if len(tasks) > 1 and total >= SPLIT_MACS:
        _parallel.parallel_for(lambda i: tasks[i](), len(tasks), blas=True)
    elif tasks:  # too little work to hand to another thread
        with_one_blas_thread(lambda: [task() for task in tasks])
    if threaded:
        with_blas_threads(blas_threads, _threaded, xp, pairs, threaded, results)
    return [r.box[0] if isinstance(r, _Later) else r for r in results]


def _each(xp: Any, pairs: Sequence[tuple]) -> list:
    return [xp.matmul(a, b) for a, b in pairs]


def _threaded(xp: Any, pairs: Sequence[tuple], which: list, results: list) -> None:
    for i in which:
        results[i] = xp.matmul(*pairs[i])


def _pieces(xp: Any, a: Any, b: Any, threads: int) -> tuple:
    """``(out, calls)``: the product's output array and the calls that fill it."""
    if a.ndim == 2 and b.ndim == 2:
        m, n = a.shape[0], b.shape[1]
        by_rows = m >= n
        cuts = _cuts(m if by_rows else n, m * a.shape[1] * n, ALIGN, threads)
        out = xp.empty((m, n), xp.result_type(a.dtype, b.dtype))
        if by_rows:
            return out, [_call(xp, a[lo:hi], b, out[lo:hi]) for lo, hi in cuts]
        return out, [_call(xp, a, b[:, lo:hi], out[:, lo:hi]) for lo, hi in cuts]
    if a.ndim > 2 and a.shape[:-2] == b.shape[:-2]:
        cuts = _cuts(a.shape[0], math.prod(a.shape) * b.shape[-1], 1, threads)
        out = xp.empty(a.shape[:-1] + b.shape[-1:], xp.result_type(a.dtype, b.dtype))
        return out, [_call(xp, a[lo:hi], b[lo:hi], out[lo:hi]) for lo, hi in cuts]
    box: list = [None]  # other shapes (vectors, broadcast batches): one call

    def whole() -> None:
        box[0] = xp.matmul(a, b)

    return _Later(box), [whole]


class _Later:
    """Stands for a result that a task fills in (resolved by :func:`matmuls`)."""

    def __init__(self, box: list) -> None:
        self.box = box


def _call(xp: Any, a: Any, b: Any, out: Any):
    return lambda: xp.matmul(a, b, out=out)


def _cuts(length: int, macs: int, align: int, threads: int) -> list:
    """Fixed pieces of ``length`` for a product of ``macs`` multiply-adds (one when small, or
    when the pool has one thread: ``threads``)."""
    if macs < SPLIT_MACS or threads < 2:
        return [(0, length)]
    count = min(MAX_PIECES, max(1, macs // PIECE_MACS), max(1, length // align))
    if count < 2:
        return [(0, length)]
    count = 1 << (count.bit_length() - 1)
    step = -(-math.ceil(length / count) // align) * align
    return [(i, min(i + step, length)) for i in range(0, length, step)]
