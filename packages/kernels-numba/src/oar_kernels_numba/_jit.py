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

# on-disk cache (next to this package, or NUMBA_CACHE_DIR); nogil so other Python threads
# (readers, the data-parallel executor's places) run meanwhile
_OPTS = {
    "cache": True,
    "nogil": True,
    "error_model": "numpy",
}  # numpy: no zero-division checks (they stop vectorisation)

#: elements below which a loop stays on one thread (a parallel launch costs ~10-20 µs)
PARALLEL_MIN = int(os.environ.get("OAR_NUMBA_PARALLEL_MIN", 1 << 16))

_MAIN = threading.main_thread()

# numba's own thread pool, not OpenMP: numba's omp layer shares libgomp with PyTorch and
# OpenBLAS builds that use it, and its spinning workers slowed a torch model in the same
# process 10x in the benchmarks. workqueue forbids concurrent parallel launches, which the
# main-thread rule above already ensures. NUMBA_THREADING_LAYER still decides when set.
if "NUMBA_THREADING_LAYER" not in os.environ:
    numba.config.THREADING_LAYER = "workqueue"


def _configure_threads() -> None:
    """numba's threads follow the CPU math library setting (OMP_NUM_THREADS / CPU_NUM)."""
    for var in ("OAR_NUM_THREADS", "OMP_NUM_THREADS"):
        raw = os.environ.get(var)
        if raw and raw.isdigit() and int(raw) > 0:
            numba.set_num_threads(min(int(raw), numba.config.NUMBA_NUM_THREADS))
            return


_configure_threads()


class Loop:
    """A loop function compiled serially and in parallel, each on first use."""

    def __init__(self, fn) -> None:
        self.serial = numba.njit(**_OPTS)(fn)
        self.parallel = numba.njit(parallel=True, **_OPTS)(fn)

    def __call__(self, size: int, *args):
        if (
            size >= PARALLEL_MIN
            and threading.current_thread() is _MAIN
            and numba.get_num_threads() > 1
        ):
            return self.parallel(*args)
        return self.serial(*args)


def loop(fn) -> Loop:
    return Loop(fn)


jit = numba.njit(**_OPTS)
prange = numba.prange
