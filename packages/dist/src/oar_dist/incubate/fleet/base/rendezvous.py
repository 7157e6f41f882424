"""A shared-directory rendezvous for role makers that have no MPI (``GeneralRoleMaker(path=...)``,
where Fluid 1.8 used Gloo over HDFS or a shared file system).

Each collective call is one round: every member writes its value to
``<path>/<group>/<round>.<rank>.npy`` (atomically: a temporary file, then a rename) and
waits until every member's file of that round exists, then reads them all. A member that
does not arrive within ``timeout`` seconds fails the call with an error naming it.
"""

from __future__ import annotations

import os
import time

import numpy as np


class FileRendezvous:
    def __init__(self, path: str, group: str, rank: int, size: int, timeout: float) -> None:
        self.dir = os.path.join(path, group)
        os.makedirs(self.dir, exist_ok=True)
        self.rank, self.size, self.timeout = rank, size, timeout
        self.round = 0

    def _file(self, rnd: int, rank: int) -> str:
        return os.path.join(self.dir, f"{rnd}.{rank}.npy")

    def allgather(self, value) -> list:
        """Every member's ``value`` (numpy-convertible), in rank order."""
        rnd = self.round
        self.round += 1
        tmp = os.path.join(self.dir, f".{rnd}.{self.rank}.{os.getpid()}.tmp.npy")
        np.save(tmp, np.asarray(value))
        os.replace(tmp, self._file(rnd, self.rank))
        deadline = time.monotonic() + self.timeout
        while True:
            missing = [r for r in range(self.size) if not os.path.exists(self._file(rnd, r))]
            if not missing:
                break
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"rendezvous in {self.dir}: members {missing} of {self.size} did not arrive "
                    f"within {self.timeout:g} s (round {rnd})"
                )
            time.sleep(0.01)
        out = [np.load(self._file(rnd, r)) for r in range(self.size)]
        if rnd >= 2:  # every member has finished reading round rnd - 2: it reached this round
            try:
                os.remove(self._file(rnd - 2, self.rank))
            except FileNotFoundError:
                pass
        return out

    def barrier(self) -> None:
        self.allgather(np.zeros(0, np.uint8))
