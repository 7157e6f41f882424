"""The communicator of a process that is alone: every collective is the identity."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from oar_dist.collective.base import CollectiveBackend, check_op


class SingleBackend(CollectiveBackend):
    """Size 1, rank 0 (what plain ``python`` without ``mpiexec`` is)."""

    name = "single"

    def __init__(self) -> None:
        self.rank = 0
        self.size = 1

    # copies through the array's own ``copy``: a GPU program's cupy arrays stay on the device

    def allreduce(self, array: np.ndarray, op: str = "sum") -> np.ndarray:
        check_op(op, "allreduce")
        return array.copy()

    def allreduce_many(
        self, arrays: Sequence[np.ndarray], op: str = "sum", bucket_bytes: int = 0
    ) -> list:
        check_op(op, "allreduce")
        return [a.copy() for a in arrays]

    def broadcast(self, array: np.ndarray, root: int = 0) -> np.ndarray:
        if root != 0:
            raise ValueError(f"broadcast: root {root} is out of range for a group of 1 rank")
        return array.copy()

    def allgather(self, array: np.ndarray) -> np.ndarray:
        return array.copy()

    def barrier(self) -> None:
        return None
