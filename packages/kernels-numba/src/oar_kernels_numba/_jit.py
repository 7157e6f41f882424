"""The numba decorators this package compiles with, and when a loop runs on several threads.

Every loop is written once with ``prange`` and compiled twice on demand: serially
(``prange`` is ``range`` there) and with ``parallel=True``, under two names so that
the disk cache keeps them apart (it does not key on the ``parallel`` flag). The parallel twin runs
only for large arrays, when CPU math may use more than one thread, and in one
Python thread at a time: numba's workqueue threading layer aborts the process
("Concurrent access has been detected") when two threads launch parallel regions
at once, so a launch takes a process-wide lock without waiting, and a thread that
finds it taken (another place of the data-parallel executor, a reader thread) runs
the serial twin instead. The data-parallel executor also lowers the thread count
to cores / places, so places never oversubscribe the cores. Only loops whose
iterations are independent go parallel, so results do not depend on the thread
count.
"""

from __future__ import annotations

import os
import threading
import types

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


_PARALLEL = threading.Lock()  # held while this package's parallel region runs
_MAX_THREADS = numba.config.NUMBA_NUM_THREADS

# numba's own thread pool, not OpenMP: numba's omp layer shares libgomp with PyTorch and
# OpenBLAS builds that use it, and its spinning workers slowed a torch model in the same
# process 10x in the benchmarks. workqueue forbids concurrent parallel launches, which the
# lock above prevents. NUMBA_THREADING_LAYER still decides when set.
if "NUMBA_THREADING_LAYER" not in os.environ:
    numba.config.THREADING_LAYER = "workqueue"


def _twin(fn, suffix: str):
    """A copy of ``fn`` under its own name: numba's disk cache keys compiled code by the
    function's qualified name, source line and bytecode, not by the ``parallel`` flag, so
    two dispatchers of one function would load each other's cached code (a "serial" loop
    running the parallel code, from any thread)."""
    twin = types.FunctionType(
        fn.__code__, fn.__globals__, fn.__name__ + suffix, fn.__defaults__, fn.__closure__
    )
    twin.__qualname__ = fn.__qualname__ + suffix
    twin.__module__ = fn.__module__
    twin.__doc__ = fn.__doc__
    return twin


class Loop:
    """A loop function compiled serially and in parallel, each on first use."""

    def __init__(self, fn, **opts) -> None:
        self.serial = numba.njit(**_OPTS, **opts)(_twin(fn, "__serial"))
        self.parallel = numba.njit(parallel=True, **_OPTS, **opts)(_twin(fn, "__parallel"))

    def __call__(self, size: int, *args):
        if size >= PARALLEL_MIN:
            # as many threads as CPU math may use now (oar.api.cpu_math_library_num_threads:
            # OMP_NUM_THREADS, set_cpu_math_library_num_threads, the data-parallel limit)
            n = min(cpu_math_library_num_threads(), _MAX_THREADS)
            if n > 1 and _PARALLEL.acquire(blocking=False):
                try:
                    if numba.get_num_threads() != n:  # per Python thread in numba
                        numba.set_num_threads(n)
                    return self.parallel(*args)
                finally:
                    _PARALLEL.release()
        return self.serial(*args)


def loop(fn=None, **opts):
    """``@loop`` or ``@loop(fastmath={"reassoc"})``: a :class:`Loop` of ``fn``."""
    if fn is None:
        return lambda f: Loop(f, **opts)
    return Loop(fn, **opts)


jit = numba.njit(**_OPTS)
prange = numba.prange
