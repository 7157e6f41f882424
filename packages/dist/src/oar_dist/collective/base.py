"""The collective backend interface every communicator implements (MPI, threads, NCCL).

A backend object is one rank's handle on a group of ``size`` ranks. Arrays are
numpy (or the device's array module); results are new arrays unless the method
says otherwise, so a caller never sees a half-reduced buffer.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence

import numpy as np

REDUCE_OPS = ("sum", "max", "min", "prod")

# Gradients smaller than this are packed together into one allreduce (Fluid's
# FLAGS_fuse_parameter_memory_size plays this role); see docs/dist.md.
DEFAULT_BUCKET_BYTES = 32 << 20


class CollectiveError(RuntimeError):
    """A collective failed: a peer died, timed out or disagreed on shapes."""


class CollectiveBackend(abc.ABC):
    """One rank of a communicator: ``rank`` in ``range(size)``."""

    name: str = "?"
    rank: int = 0
    size: int = 1

    @abc.abstractmethod
    def allreduce(self, array: np.ndarray, op: str = "sum") -> np.ndarray:
        """The elementwise reduction (``op`` in :data:`REDUCE_OPS`) of ``array`` over all ranks."""

    @abc.abstractmethod
    def broadcast(self, array: np.ndarray, root: int = 0) -> np.ndarray:
        """``root``'s ``array`` on every rank (others pass an array of the same shape and dtype)."""

    @abc.abstractmethod
    def allgather(self, array: np.ndarray) -> np.ndarray:
        """Every rank's ``array`` concatenated along axis 0, in rank order."""

    @abc.abstractmethod
    def barrier(self) -> None:
        """Return once every rank has called it."""

    def allreduce_many(
        self,
        arrays: Sequence[np.ndarray],
        op: str = "sum",
        bucket_bytes: int = DEFAULT_BUCKET_BYTES,
    ) -> list:
        """Allreduce several arrays, packing consecutive same-dtype ones into buckets.

        One message per bucket instead of one per tensor: latency, not bandwidth,
        dominates the small tensors of a model's gradients.
        """
        out: list = [None] * len(arrays)
        for bucket in plan_buckets(arrays, bucket_bytes):
            if len(bucket) == 1:
                i = bucket[0]
                out[i] = self.allreduce(arrays[i], op)
                continue
            flat = np.concatenate([np.ravel(arrays[i]) for i in bucket])
            red = self._allreduce_owned(flat, op)
            pos = 0
            for i in bucket:
                n = arrays[i].size
                out[i] = red[pos : pos + n].reshape(arrays[i].shape)
                pos += n
        return out

    def _allreduce_owned(self, flat: np.ndarray, op: str) -> np.ndarray:
        """Allreduce a buffer nobody else holds: a backend may reduce it in place."""
        return self.allreduce(flat, op)

    def close(self) -> None:
        """Release what the backend holds (nothing by default)."""
        return None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name} rank {self.rank}/{self.size}>"


def plan_buckets(arrays: Sequence[np.ndarray], bucket_bytes: int) -> list:
    """Indices of ``arrays`` grouped into runs of one dtype of at most ``bucket_bytes``."""
    buckets: list = []
    cur: list = []
    cur_bytes = 0
    cur_dtype = None
    for i, a in enumerate(arrays):
        nbytes = a.nbytes
        if cur and (a.dtype != cur_dtype or cur_bytes + nbytes > bucket_bytes):
            buckets.append(cur)
            cur, cur_bytes = [], 0
        cur.append(i)
        cur_bytes += nbytes
        cur_dtype = a.dtype
    if cur:
        buckets.append(cur)
    return buckets


def check_op(op: str, who: str) -> None:
    if op not in REDUCE_OPS:
        raise ValueError(f"{who}: reduce op must be one of {list(REDUCE_OPS)}, given {op!r}")
