"""A small persistent thread pool that splits a kernel's independent pieces (batch chunks of a
convolution) across the cores CPU math may use; kernel plugins reach it as
``oar.api.parallel_for`` (oar-kernels-cpu's and oar-kernels-numba's convolutions use it).

numpy releases the GIL in its copies and BLAS calls, so Python threads run those pieces in
parallel. :func:`parallel_for` hands pieces out one at a time to the pool's workers and to the
calling thread alike, so a worker the OS does not schedule (a busy shared machine) only
delays the piece it holds; meanwhile BLAS is limited to one thread, so the pool never
oversubscribes the cores with BLAS's own threads. Threads other than the main thread (the
data-parallel executor runs one per place, each with its share of the cores) run the pieces
serially. How many threads: :func:`oar.api.cpu_math_library_num_threads` (``OMP_NUM_THREADS``,
``set_cpu_math_library_num_threads``, ``FLAGS_paddle_num_threads``), at most the core count.

Callers make their results independent of the thread count: each piece writes its own part of
the output, and reductions add per-piece results in piece order.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from oar.cpu_threads import cpu_math_library_num_threads, limit_cpu_math_threads

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
            _pool = ThreadPoolExecutor(max_workers=n, thread_name_prefix="oar-cpu-pool")
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
