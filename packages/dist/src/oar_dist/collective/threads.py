"""The in-process backend: ranks are threads of one process (single-machine data parallel).

Each collective is a rendezvous on a :class:`threading.Barrier`: every rank
deposits its array, waits for the others, computes its own result from the
deposited arrays (numpy releases the GIL, so the ranks reduce in parallel)
and waits again before the slots are reused. Every rank gets its own result
array, because update kernels may later write into it in place.
"""

from __future__ import annotations

import threading

import numpy as np

from oar_dist.collective.base import CollectiveBackend, CollectiveError, check_op
from oar_dist.collective.timeouts import collective_timeout

_UFUNCS = {"sum": np.add, "max": np.maximum, "min": np.minimum, "prod": np.multiply}


class ThreadGroup:
    """The shared state of ``size`` thread ranks; ``member(r)`` is rank r's backend."""

    def __init__(self, size: int, timeout: float | None = None) -> None:
        if size < 1:
            raise ValueError(f"ThreadGroup: size must be >= 1, given {size}")
        self.size = size
        self.timeout = collective_timeout() if timeout is None else timeout
        self._barrier = threading.Barrier(size, timeout=self.timeout)
        self._slots: list = [None] * size
        self.members = [ThreadBackend(self, r) for r in range(size)]

    def member(self, rank: int) -> ThreadBackend:
        return self.members[rank]

    def abort(self) -> None:
        """Wake every rank waiting in a collective with an error (a peer failed)."""
        self._barrier.abort()

    @property
    def broken(self) -> bool:
        return self._barrier.broken

    def _wait(self, rank: int, what: str) -> None:
        try:
            self._barrier.wait()
        except threading.BrokenBarrierError:
            raise CollectiveError(
                f"threads backend: rank {rank} gave up in {what}: another rank failed or did not "
                f"arrive within {self.timeout:g} s (OAR_COLLECTIVE_TIMEOUT)"
            ) from None


class ThreadBackend(CollectiveBackend):
    """Rank ``rank`` of a :class:`ThreadGroup`."""

    name = "threads"

    def __init__(self, group: ThreadGroup, rank: int) -> None:
        self.group = group
        self.rank = rank
        self.size = group.size

    def _exchange(self, array, what: str) -> list:
        g = self.group
        g._slots[self.rank] = array
        g._wait(self.rank, what)
        return g._slots

    def allreduce(self, array: np.ndarray, op: str = "sum") -> np.ndarray:
        check_op(op, "allreduce")
        if self.size == 1:
            return np.array(array, copy=True)
        slots = self._exchange(array, "allreduce")
        try:
            shapes = {tuple(np.shape(s)) for s in slots}
            if len(shapes) != 1:
                raise CollectiveError(
                    f"threads backend: allreduce got arrays of different shapes on the ranks: "
                    f"{[list(np.shape(s)) for s in slots]}"
                )
            ufunc = _UFUNCS[op]
            out = ufunc(slots[0], slots[1])
            for s in slots[2:]:
                ufunc(out, s, out=out)
        finally:
            self.group._wait(self.rank, "allreduce")
        return out

    def allreduce_many(self, arrays, op: str = "sum", bucket_bytes: int = 0) -> list:
        """One rendezvous for the whole list and no packing: threads share memory, so a bucket's
        copy in and out would cost more than the barrier it saves."""
        check_op(op, "allreduce")
        if self.size == 1:
            return [np.array(a, copy=True) for a in arrays]
        slots = self._exchange(list(arrays), "allreduce")
        try:
            if len({len(s) for s in slots}) != 1:
                raise CollectiveError(
                    f"threads backend: allreduce of lists of different lengths on the ranks: "
                    f"{[len(s) for s in slots]}"
                )
            ufunc = _UFUNCS[op]
            out = []
            for i in range(len(arrays)):
                parts = [s[i] for s in slots]
                if len({np.shape(p) for p in parts}) != 1:
                    raise CollectiveError(
                        f"threads backend: allreduce got arrays of different shapes on the ranks "
                        f"(tensor {i}): {[list(np.shape(p)) for p in parts]}"
                    )
                acc = ufunc(parts[0], parts[1])
                for p in parts[2:]:
                    ufunc(acc, p, out=acc)
                out.append(acc)
        finally:
            self.group._wait(self.rank, "allreduce")
        return out

    def broadcast(self, array: np.ndarray, root: int = 0) -> np.ndarray:
        if not 0 <= root < self.size:
            raise ValueError(f"broadcast: root {root} is out of range for {self.size} ranks")
        slots = self._exchange(array, "broadcast")
        try:
            out = np.array(slots[root], copy=True)
        finally:
            self.group._wait(self.rank, "broadcast")
        return out

    def allgather(self, array: np.ndarray) -> np.ndarray:
        slots = self._exchange(array, "allgather")
        try:
            out = np.concatenate([np.asarray(s) for s in slots])
        finally:
            self.group._wait(self.rank, "allgather")
        return out

    def barrier(self) -> None:
        self.group._wait(self.rank, "barrier")
