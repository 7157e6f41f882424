"""Two-level communicator: device threads of a process, then the processes (e.g. over MPI).

Used when a trainer of a multi-process job runs several places: reduce among
the local threads, local rank 0 reduces across processes, then broadcasts
the result back to its threads.
"""

from __future__ import annotations

import numpy as np

from oar_dist.collective.base import CollectiveBackend, check_op
from oar_dist.collective.threads import ThreadBackend


class HierarchicalBackend(CollectiveBackend):
    """Rank ``outer.rank * local.size + local.rank`` of ``outer.size * local.size`` ranks."""

    name = "hierarchical"

    def __init__(self, local: ThreadBackend, outer: CollectiveBackend) -> None:
        self.local = local
        self.outer = outer
        self.rank = outer.rank * local.size + local.rank
        self.size = outer.size * local.size

    def allreduce(self, array: np.ndarray, op: str = "sum") -> np.ndarray:
        check_op(op, "allreduce")
        part = self.local.allreduce(array, op)
        if self.local.rank == 0:
            part = self.outer.allreduce(part, op)
        return self.local.broadcast(part, root=0)

    def broadcast(self, array: np.ndarray, root: int = 0) -> np.ndarray:
        outer_root, local_root = divmod(root, self.local.size)
        value = self.local.broadcast(array, root=local_root)
        if self.local.rank == 0:
            value = self.outer.broadcast(value, root=outer_root)
        return self.local.broadcast(value, root=0)

    def allgather(self, array: np.ndarray) -> np.ndarray:
        part = self.local.allgather(array)
        if self.local.rank == 0:
            part = self.outer.allgather(part)
        return self.local.broadcast(part, root=0)

    def barrier(self) -> None:
        self.local.barrier()
        if self.local.rank == 0:
            self.outer.barrier()
        self.local.barrier()
