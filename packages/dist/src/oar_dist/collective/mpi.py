"""The MPI backend (mpi4py): one rank per process, started by ``mpiexec``.

Collectives are issued non-blocking and polled against a deadline
(``OAR_COLLECTIVE_TIMEOUT``), so a dead or hung peer ends the job with an
error naming the collective instead of hanging it: blocking MPI calls cannot
time out. ``mpi4py`` is imported when the first backend is made, never at
plugin import.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from oar_dist.collective.base import CollectiveBackend, CollectiveError, check_op
from oar_dist.collective.timeouts import collective_timeout


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

    def _wait(self, req: Any, what: str) -> None:
        if req.Test():
            return
        deadline = time.monotonic() + self.timeout
        pause = 0.0
        while not req.Test():  # Test() also drives MPI's progress engine
            if time.monotonic() > deadline:
                raise CollectiveError(
                    f"mpi backend: rank {self.rank} of {self.size} waited more than "
                    f"{self.timeout:g} s in {what}: a peer rank died or is stuck "
                    f"(OAR_COLLECTIVE_TIMEOUT sets the bound)"
                )
            if pause:
                time.sleep(pause)
            pause = min(pause * 2 or 1e-5, 1e-3)

    def allreduce(self, array: np.ndarray, op: str = "sum") -> np.ndarray:
        check_op(op, "allreduce")
        src = np.ascontiguousarray(array)
        out = np.empty_like(src)
        self._wait(self.comm.Iallreduce(src, out, op=self._ops[op]), "allreduce")
        return out

    def broadcast(self, array: np.ndarray, root: int = 0) -> np.ndarray:
        if not 0 <= root < self.size:
            raise ValueError(f"broadcast: root {root} is out of range for {self.size} ranks")
        buf = np.array(array, copy=True, order="C")
        self._wait(self.comm.Ibcast(buf, root=root), "broadcast")
        return buf

    def allgather(self, array: np.ndarray) -> np.ndarray:
        src = np.ascontiguousarray(array)
        if src.ndim == 0:
            src = src.reshape(1)
        rows = np.empty(self.size, dtype=np.int64)
        self._wait(self.comm.Iallgather(np.array([src.shape[0]], np.int64), rows), "allgather")
        row = int(np.prod(src.shape[1:], dtype=np.int64))
        counts = rows * row
        out = np.empty((int(rows.sum()),) + src.shape[1:], dtype=src.dtype)
        displs = np.concatenate([[0], np.cumsum(counts)[:-1]])
        self._wait(
            self.comm.Iallgatherv(src, [out, (counts, displs)]),
            "allgather",
        )
        return out

    def barrier(self) -> None:
        self._wait(self.comm.Ibarrier(), "barrier")
