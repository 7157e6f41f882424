"""How oar-kernels-cpu splits a kernel's work across the kernel thread pool.

The pool itself is core's (``oar.api.parallel_for``: a persistent pool of CPU-math
threads, BLAS at one thread meanwhile, one thread off the main thread; oar-kernels-numba
uses it too); :func:`parallel_for` and :func:`parallel_threads` here hand over to it.

Callers make their results independent of the thread count: each piece writes its own part of
the output, and reductions add per-piece results in piece order. :func:`pieces` cuts an array's
rows into pieces fixed by the sizes alone (never by the thread count), and only from
:data:`SPLIT_MIN` elements: below it a split costs more (a pool hand-off is some 20-40 µs) than
the second core gives back.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from oar import api


def parallel_threads() -> int:
    """Core's ``oar.api.parallel_threads``."""
    return api.parallel_threads()


def parallel_for(
    fn: Callable[[int], None], count: int, threads: int | None = None, blas: bool = True
) -> None:
    """Core's ``oar.api.parallel_for``, its thread count from this module's
    :func:`parallel_threads` (which tests patch)."""
    api.parallel_for(fn, count, parallel_threads() if threads is None else threads, blas)


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
