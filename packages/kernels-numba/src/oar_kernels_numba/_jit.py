"""The numba decorators this package compiles with, and when a loop runs on several threads.

Every loop is written once with ``prange`` and compiled twice on demand: serially
(``prange`` is ``range`` there) and with ``parallel=True``. The parallel twin runs
only for large arrays and only on the main thread: the data-parallel executor runs
one thread per place, and those threads get the serial loops (one core each, no
oversubscription; numba's workqueue threading layer also forbids concurrent
parallel launches). Only elementwise loops go parallel, so results do not depend
on the thread count.
"""

from __future__ import annotations

import os
import threading

import numba
from oar.api import cpu_math_library_num_threads

from oar_kernels_numba._limits import PARALLEL_MIN, SMALL

__all__ = ["PARALLEL_MIN", "SMALL", "Loop", "jit", "loop", "prange"]

# on-disk cache (next to this package, or NUMBA_CACHE_DIR); nogil so other Python threads
# (readers, the data-parallel executor's places) run meanwhile
_OPTS = {
    "cache": True,
    "nogil": True,
    "error_model": "numpy",
}  # numpy: no zero-division checks (they stop vectorisation)


_MAIN = threading.main_thread()
_MAX_THREADS = numba.config.NUMBA_NUM_THREADS

# numba's own thread pool, not OpenMP: numba's omp layer shares libgomp with PyTorch and
# OpenBLAS builds that use it, and its spinning workers slowed a torch model in the same
# process 10x in the benchmarks. workqueue forbids concurrent parallel launches, which the
# main-thread rule above already ensures. NUMBA_THREADING_LAYER still decides when set.
if "NUMBA_THREADING_LAYER" not in os.environ:
    numba.config.THREADING_LAYER = "workqueue"


class Loop:
    """A loop function compiled serially and in parallel, each on first use."""

    def __init__(self, fn, **opts) -> None:
        self.serial = numba.njit(**_OPTS, **opts)(fn)
        self.parallel = numba.njit(parallel=True, **_OPTS, **opts)(fn)

    def __call__(self, size: int, *args):
        if size >= PARALLEL_MIN and threading.current_thread() is _MAIN:
            # as many threads as CPU math may use now (oar.api.cpu_math_library_num_threads:
            # OMP_NUM_THREADS, set_cpu_math_library_num_threads, the data-parallel limit)
            n = min(cpu_math_library_num_threads(), _MAX_THREADS)
            if n > 1:
                if numba.get_num_threads() != n:
                    numba.set_num_threads(n)
                return self.parallel(*args)
        return self.serial(*args)


def loop(fn=None, **opts):
    """``@loop`` or ``@loop(fastmath={"reassoc"})``: a :class:`Loop` of ``fn``."""
    if fn is None:
        return lambda f: Loop(f, **opts)
    return Loop(fn, **opts)


jit = numba.njit(**_OPTS)
prange = numba.prange
