"""CPU math threads: how many threads the BLAS library (and compiled kernels) may use.

By default oar leaves OpenBLAS at its own default (one thread per core, or
``OMP_NUM_THREADS`` / ``OPENBLAS_NUM_THREADS`` from the environment), like
PyTorch. :func:`set_cpu_math_library_num_threads` changes it at run time (Fluid's
``AnalysisConfig.set_cpu_math_library_num_threads``; ``FLAGS_paddle_num_threads``
calls it too), through threadpoolctl when installed, else by calling the
``*_set_num_threads`` function of the OpenBLAS library numpy loaded.
:func:`limit_cpu_math_threads` lowers it for a block: the data-parallel executor,
which runs one thread per place, gives each place ``cores // places`` threads so
places x BLAS threads never exceed the cores. Kernel plugins with their own
thread pools read :func:`cpu_math_library_num_threads` (oar-kernels-numba does).

:func:`with_blas_threads` runs one call with OpenBLAS at a given thread count (two C calls,
no lock; none when the count is already right), :func:`with_one_blas_thread` at one thread:
kernels-cpu makes its small and medium matrix products at one thread, because an OpenBLAS
call on several threads leaves its worker threads spinning for milliseconds afterwards,
taking a core from the next kernel's threads; its large products run at the full count
(or, under ``FLAGS_cpu_deterministic``, split across its own thread pool: the same bits at
any thread count). :func:`cpu_deterministic` reads that flag.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

_lock = threading.Lock()
_MAIN = threading.main_thread()
_setting: int | None = None  # what the user set; None = the library's default
_limit: int | None = None  # a temporary lower limit (limit_cpu_math_threads)
_funcs: tuple | None = None  # ((set, get), ...) of each OpenBLAS loaded, numpy's first
_scanned_with_scipy = False

_NAMES = (  # (set, get) in the OpenBLAS builds numpy and scipy wheels ship
    ("scipy_openblas_set_num_threads64_", "scipy_openblas_get_num_threads64_"),
    ("scipy_openblas_set_num_threads", "scipy_openblas_get_num_threads"),
    ("openblas_set_num_threads64_", "openblas_get_num_threads64_"),
    ("openblas_set_num_threads", "openblas_get_num_threads"),
)


def _scan() -> tuple:
    """(set, get) of every OpenBLAS loaded in this process: numpy's, and SciPy's once
    ``scipy.linalg`` is imported (numba's compiled ``np.dot`` calls SciPy's BLAS)."""
    found: list = []
    try:
        with open("/proc/self/maps") as f:
            paths = {ln.split()[-1] for ln in f if "openblas" in ln.lower() and "/" in ln}
    except OSError:
        paths = set()
    for path in sorted(paths, key=lambda p: ("numpy" not in p, p)):  # numpy's first
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for set_name, get_name in _NAMES:
            if hasattr(lib, set_name) and hasattr(lib, get_name):
                found.append((getattr(lib, set_name), getattr(lib, get_name)))
                break
    return tuple(found)


def _openblas() -> tuple:
    """``_scan()``, cached; scanned again once after ``scipy.linalg`` is first imported."""
    global _funcs, _scanned_with_scipy
    with_scipy = "scipy.linalg" in sys.modules
    if _funcs is None or (with_scipy and not _scanned_with_scipy):
        import numpy  # noqa: F401  (loads numpy's BLAS)

        _funcs, _scanned_with_scipy = _scan(), with_scipy
    return _funcs


_controllers: list = []  # [(scanned with scipy, threadpoolctl's BLAS controllers) or None]


def _blas_controllers() -> tuple:
    """threadpoolctl's controllers of the BLAS libraries loaded (MKL, BLIS, OpenBLAS), found
    once and again once after ``scipy.linalg`` is first imported, as :func:`_openblas`;
    ``()`` without threadpoolctl. Building a ``threadpool_limits`` scans every loaded library
    (about 1 ms here), so :func:`limit_cpu_math_threads`, which runs around every
    ``parallel_for`` of the kernels, keeps the scan's controllers and calls their setters."""
    with_scipy = "scipy.linalg" in sys.modules
    if _controllers and (_controllers[0] is None or _controllers[0][0] or not with_scipy):
        return _controllers[0][1] if _controllers[0] is not None else ()
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        _controllers[:] = [None]
        return ()
    import numpy  # noqa: F401  (loads numpy's BLAS)

    found = tuple(ThreadpoolController().select(user_api="blas").lib_controllers)
    _controllers[:] = [(with_scipy, found)]
    return found


def _apply(n: int) -> None:
    """BLAS at ``n`` threads: every library threadpoolctl knows, else OpenBLAS's own call."""
    controllers = _blas_controllers()
    if controllers:
        for lib in controllers:
            lib.set_num_threads(n)
        return
    for set_threads, _ in _openblas():
        set_threads(ctypes.c_int(n))


def with_blas_threads(n: int, fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` with OpenBLAS held at ``n`` threads for the call (then as it was; no
    change at all when it is at ``n`` already). Only the main thread changes the count (it is
    process-wide): other threads, such as the data-parallel places that run inside
    :func:`limit_cpu_math_threads`, call ``fn`` as is."""
    fns = _openblas()
    if not fns or threading.current_thread() is not _MAIN:
        return fn(*args)
    set_threads, get_threads = fns[0]  # numpy's (the GEMMs fn runs)
    before = get_threads()
    if before == n:
        return fn(*args)
    set_threads(n)
    try:
        return fn(*args)
    finally:
        set_threads(before)


def with_one_blas_thread(fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` with OpenBLAS held at one thread for the call (:func:`with_blas_threads`)."""
    return with_blas_threads(1, fn, *args)


def cpu_deterministic() -> bool:
    """``FLAGS_cpu_deterministic``: CPU results must not depend on the thread count (kernels
    then keep to their thread-count-independent splits, such as kernels-cpu's pool split of
    large matrix products instead of OpenBLAS's own threads)."""
    if not _flags:  # imported on first use (oar.flags imports this module)
        from oar import flags

        _flags.append(flags)
    return _flags[0].CPU_DETERMINISTIC


_flags: list = []  # [the oar.flags module], once imported (every matrix product asks)


def blas_num_threads() -> int | None:
    """The thread count the BLAS library uses now (None when it cannot be read)."""
    fns = _openblas()
    return int(fns[0][1]()) if fns else None


def cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def cpu_math_library_num_threads() -> int:
    """The threads CPU math may use now: a limit in force, the user's setting, the
    environment's ``OMP_NUM_THREADS``, else one per core."""
    if _limit is not None:
        return _limit
    if _setting is not None:
        return _setting
    raw = os.environ.get("OMP_NUM_THREADS", "")
    return int(raw) if raw.isdigit() and int(raw) > 0 else cpu_count()


def set_cpu_math_library_num_threads(n: int) -> None:
    """Use ``n`` threads for CPU math (BLAS, compiled kernels) from now on."""
    global _setting
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ValueError(f"set_cpu_math_library_num_threads: expected a positive int, given {n!r}")
    with _lock:
        _setting = n
        if _limit is None:
            _apply(n)


@contextlib.contextmanager
def limit_cpu_math_threads(n: int) -> Iterator[int]:
    """At most ``n`` CPU math threads inside the block (then what was in force before)."""
    global _limit
    n = max(1, int(n))
    with _lock:
        before, blas_before = _limit, blas_num_threads()
        _limit = min(n, cpu_math_library_num_threads())
        _apply(_limit)
    try:
        yield _limit
    finally:
        with _lock:
            _limit = before
            _apply(blas_before or cpu_math_library_num_threads())
