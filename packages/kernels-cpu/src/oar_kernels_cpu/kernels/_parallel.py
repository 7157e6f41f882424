"""A small persistent thread pool that splits a kernel's independent pieces (batch chunks of a
convolution) across the cores CPU math may use.

numpy releases the GIL in its copies and BLAS calls, so Python threads run those pieces in
parallel. :func:`parallel_for` hands pieces out one at a time to the pool's workers and to the
calling thread alike, so a worker the OS does not schedule (a busy shared machine) only
delays the piece it holds; meanwhile BLAS is limited to one thread, so the pool never
oversubscribes the cores with BLAS's own threads. Threads other than the main thread (the
data-parallel executor runs one per place, each with its share of the cores) run the pieces
serially. How many threads: :func:`oar.api.cpu_math_library_num_threads` (``OMP_NUM_THREADS``,
``set_cpu_math_library_num_threads``, ``FLAGS_paddle_num_threads``), at most the core count.

Callers make their results independent of the thread count: each piece writes its own part of
the output, and reductions add per-piece results in piece order. :func:`pieces` cuts an array's
rows into pieces fixed by the sizes alone (never by the thread count), and only from
:data:`SPLIT_MIN` elements: below it a split costs more (a pool hand-off is some 20-40 µs) than
the second core gives back.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from oar.api import cpu_math_library_num_threads, limit_cpu_math_threads

_MAIN = threading.main_thread()
_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None
_pool_size = 0
_CORES = os.cpu_count() or 1  # os.cpu_count() reads /sys each call (~14 µs): once per process


def parallel_threads() -> int:
    """Threads :func:`parallel_for` would use now on this thread."""
    if threading.current_thread() is not _MAIN:
        return 1
    return max(1, min(cpu_math_library_num_threads(), _CORES))


def _workers(n: int) -> ThreadPoolExecutor:
    global _pool, _pool_size
    with _lock:
        if _pool is None or _pool_size < n:
            if _pool is not None:
                _pool.shutdown(wait=False)
            _pool = ThreadPoolExecutor(max_workers=n, thread_name_prefix="oar-kernels-cpu")
            _pool_size = n
        return _pool


def _forget_pool() -> None:  # a forked child has no pool threads
    global _pool, _pool_size
    _pool, _pool_size = None, 0


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def parallel_for(
    fn: Callable[[int], None], count: int, threads: int | None = None, blas: bool = True
) -> None:
    """``fn(i)`` for every ``i`` in ``range(count)``, on up to ``threads`` threads (default
    :func:`parallel_threads`); returns when all are done, raising the first error. ``blas=False``
    says the pieces make no BLAS calls (BLAS's thread count is then left alone)."""
    n = min(parallel_threads() if threads is None else threads, count)
    if n <= 1:
        for i in range(count):
            fn(i)
        return
    nxt = itertools.count().__next__  # atomic under the GIL

    def work() -> None:
        i = nxt()
        while i < count:
            fn(i)
            i = nxt()

    with limit_cpu_math_threads(1) if blas else contextlib.nullcontext():
        futures = [_workers(n - 1).submit(work) for _ in range(n - 1)]
        try:
            work()
        finally:
            for f in futures:
                f.result()


#: Elements from which a kernel splits an array into pieces for the pool (below: one call).
SPLIT_MIN = int(os.environ.get("OAR_SPLIT_MIN", 1 << 19))
#: Elements per piece: large enough that a piece's numpy work dwarfs its Python overhead.
#: (Both are read once, at import; tests lower them to split small arrays.)
PIECE = int(os.environ.get("OAR_SPLIT_PIECE", 1 << 17))


def pieces(rows: int, row_size: int = 1) -> list:
    """``(start, stop)`` ranges cutting ``rows`` rows of ``row_size`` elements into pieces of
    about :data:`PIECE` elements (whole rows), or one range when there are fewer than
    :data:`SPLIT_MIN` elements. The cut depends on the sizes only, so per-piece partial results
    combined in piece order are the same for every thread count."""
    if rows * row_size < SPLIT_MIN or rows < 2:
        return [(0, rows)]
    per = max(1, PIECE // max(row_size, 1))
    return [(a, min(a + per, rows)) for a in range(0, rows, per)]


def for_pieces(fn: Callable[[int, int], None], cuts: list, blas: bool = False) -> None:
    """``fn(start, stop)`` for every range of ``cuts`` (from :func:`pieces`), on the pool."""
    if len(cuts) == 1:
        fn(*cuts[0])
        return
    parallel_for(lambda i: fn(*cuts[i]), len(cuts), blas=blas)
