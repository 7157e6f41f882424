"""The MPI backend (mpi4py): one rank per process, started by ``mpiexec``.

Collectives block (as fast as raw mpi4py); a watchdog thread ends the job
with ``MPI_Abort`` and a message naming the rank and the collective when one
outlives ``OAR_COLLECTIVE_TIMEOUT`` (default 60 s), so a dead or hung peer
never hangs the job. ``mpi4py`` is imported when the first backend is made, never at
plugin import.
"""

from __future__ import annotations

import os
import struct
import sys
import threading
import time
import weakref
from typing import Any

import numpy as np

from oar_dist.collective.base import CollectiveBackend, check_op
from oar_dist.collective.timeouts import collective_timeout

# the exit status of every rank when a collective times out (mpiexec reports it)
ABORT_CODE = 70


def load_mpi() -> Any:
    """``mpi4py.MPI``, or an ImportError that says how to get it."""
    try:
        from mpi4py import MPI
    except (ImportError, RuntimeError) as exc:  # RuntimeError: mpi4py found no MPI library
        raise ImportError(
            f"the mpi collective backend needs mpi4py and an MPI library: "
            f"pip install mpi4py mpich ({exc})"
        ) from exc
    return MPI


class MPIBackend(CollectiveBackend):
    """A rank of an MPI communicator (``COMM_WORLD`` by default)."""

    name = "mpi"

    def __init__(self, comm: Any = None, timeout: float | None = None) -> None:
        MPI = load_mpi()
        self._MPI = MPI
        self.comm = comm if comm is not None else MPI.COMM_WORLD
        self.rank = self.comm.Get_rank()
        self.size = self.comm.Get_size()
        self.timeout = collective_timeout() if timeout is None else timeout
        self._ops = {"sum": MPI.SUM, "max": MPI.MAX, "min": MPI.MIN, "prod": MPI.PROD}
        self._inflight: tuple | None = None
        self._watchdog: threading.Thread | None = None

    def _run(self, what: str, fn: Any, *args: Any, **kwargs: Any) -> None:
        """Run the blocking collective ``fn`` under the watchdog's deadline."""
        if self._watchdog is None:
            self._start_watchdog()
        self._inflight = (what, time.monotonic())
        try:
            fn(*args, **kwargs)
        finally:
            self._inflight = None

    def _start_watchdog(self) -> None:
        t = threading.Thread(
            target=_watch, args=(weakref.ref(self),), name="oar-mpi-watchdog", daemon=True
        )
        self._watchdog = t
        t.start()

    def allreduce(self, array: np.ndarray, op: str = "sum") -> np.ndarray:
        check_op(op, "allreduce")
        src = np.ascontiguousarray(array)
        out = np.empty_like(src)
        self._run("allreduce", self.comm.Allreduce, src, out, op=self._ops[op])
        return out

    def _allreduce_owned(self, flat: np.ndarray, op: str) -> np.ndarray:
        # a bucket's packed buffer: reduce in place, no second 'out' buffer to fault in
        self._run("allreduce", self.comm.Allreduce, self._MPI.IN_PLACE, flat, op=self._ops[op])
        return flat

    def broadcast(self, array: np.ndarray, root: int = 0) -> np.ndarray:
        if not 0 <= root < self.size:
            raise ValueError(f"broadcast: root {root} is out of range for {self.size} ranks")
        buf = np.array(array, copy=True, order="C")
        self._run("broadcast", self.comm.Bcast, buf, root=root)
        return buf

    def allgather(self, array: np.ndarray) -> np.ndarray:
        src = np.ascontiguousarray(array)
        if src.ndim == 0:
            src = src.reshape(1)
        rows = np.empty(self.size, dtype=np.int64)
        self._run("allgather", self.comm.Allgather, np.array([src.shape[0]], np.int64), rows)
        row = int(np.prod(src.shape[1:], dtype=np.int64))
        counts = rows * row
        out = np.empty((int(rows.sum()),) + src.shape[1:], dtype=src.dtype)
        displs = np.concatenate([[0], np.cumsum(counts)[:-1]])
        self._run("allgather", self.comm.Allgatherv, src, [out, (counts, displs)])
        return out

    def barrier(self) -> None:
        self._run("barrier", self.comm.Barrier)


def _watch(ref: Any) -> None:
    """Abort the job when a collective of the backend ``ref`` outlives its timeout.

    A blocking MPI call cannot be interrupted, and polling a non-blocking one
    from Python is several times slower for large messages; so the call blocks
    and this thread ends a hung job (``MPI_Abort`` stops every rank), saying
    which rank waited in which collective.
    """
    while True:
        backend = ref()
        if backend is None:
            return
        inflight, timeout, comm = backend._inflight, backend.timeout, backend.comm
        rank, size = backend.rank, backend.size
        del backend
        if inflight is not None and time.monotonic() - inflight[1] > timeout:
            sys.stderr.write(
                f"oar-dist: mpi backend: rank {rank} of {size} waited more than {timeout:g} s in "
                f"{inflight[0]}: a peer rank died or is stuck (OAR_COLLECTIVE_TIMEOUT sets the "
                f"bound); aborting the job\n"
            )
            sys.stderr.flush()
            wait_until_read(_stderr_fd())
            comm.Abort(ABORT_CODE)
            return
        time.sleep(min(1.0, timeout / 20))


def _stderr_fd() -> int:
    try:
        return sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):  # replaced by an object without a descriptor
        return 2


def wait_until_read(fd: int, limit: float = 10.0) -> bool:
    """Wait (at most ``limit`` s) until the reader of the pipe ``fd`` has read all written to it.

    mpiexec (hydra) exits as soon as it handles an abort, dropping any output of the
    rank it has not forwarded yet; its proxy forwards what it reads before it reads
    the abort, so the message is safe once the pipe is empty. A loaded machine can
    starve the proxy for longer than any fixed pause. True when the pipe was emptied
    (or ``fd`` is not a pipe: a file or terminal holds what was written).
    """
    try:
        import fcntl
        import stat
        import termios

        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return True
    except (ImportError, OSError):
        return True
    deadline = time.monotonic() + limit
    while True:
        try:
            pending = struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0]
        except OSError:
            return True
        if pending == 0:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
