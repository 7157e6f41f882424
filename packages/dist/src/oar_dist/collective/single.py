"""The communicator of a process that is alone: every collective is the identity."""

from __future__ import annotations

import numpy as np

from oar_dist.collective.base import CollectiveBackend, check_op


class SingleBackend(CollectiveBackend):
    """Size 1, rank 0 (what plain ``python`` without ``mpiexec`` is)."""

    name = "single"

    def __init__(self) -> None:
        self.rank = 0
        self.size = 1

    def allreduce(self, array: np.ndarray, op: str = "sum") -> np.ndarray:
        check_op(op, "allreduce")
        return np.array(array, copy=True)

    def broadcast(self, array: np.ndarray, root: int = 0) -> np.ndarray:
        if root != 0:
            raise ValueError(f"broadcast: root {root} is out of range for a group of 1 rank")
        return np.array(array, copy=True)

    def allgather(self, array: np.ndarray) -> np.ndarray:
        return np.array(array, copy=True)

    def barrier(self) -> None:
        return None
