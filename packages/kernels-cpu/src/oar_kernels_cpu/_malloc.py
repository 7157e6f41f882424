"""Keep the memory of large arrays mapped between training steps (glibc's malloc).

numpy allocates arrays with ``malloc``. glibc serves a block above its mmap threshold
(128 KiB at start, raised to the size of the last such block freed) with a fresh mapping, and
hands the top of the heap back to the OS once more than its trim threshold (twice that) is
free. A training step allocates and frees the same large activations and gradients every
step, so every step faulted them in again, page by page: about 1,900 page faults (7.9 MB) per
step of the seed's MNIST CNN, 5 of its 31 ms of CPU time on this machine. With the mmap
threshold at 32 MiB and the trim threshold at 64 MiB those blocks stay in the heap and are
reused (no page faults in the steady state); at most 64 MiB of freed memory stays with the
process.

Done once, when kernels-cpu registers its device. ``OAR_MALLOC_TUNING=0`` leaves malloc alone,
and so does a process that sets glibc's own ``MALLOC_MMAP_THRESHOLD_`` /
``MALLOC_TRIM_THRESHOLD_`` / ``GLIBC_TUNABLES``. Other C libraries (musl, macOS, Windows) are
left alone.
"""

from __future__ import annotations

import ctypes
import os
import sys

M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 32 << 20  # glibc's largest allowed value on 64-bit
TRIM_THRESHOLD = 64 << 20
_OWN_SETTINGS = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "GLIBC_TUNABLES")

_done: list = []


def tune_malloc() -> bool:
    """Raise glibc's mmap and trim thresholds (once); whether they were set."""
    if _done:
        return _done[0]
    _done.append(False)
    if os.environ.get("OAR_MALLOC_TUNING", "1") == "0" or not sys.platform.startswith("linux"):
        return False
    if any(os.environ.get(name) for name in _OWN_SETTINGS):
        return False
    try:
        libc = ctypes.CDLL(None)
        if not libc.gnu_get_libc_version:  # glibc only (musl has a mallopt that does nothing)
            return False
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    _done[0] = bool(
        mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD) and mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD)
    )
    return _done[0]
