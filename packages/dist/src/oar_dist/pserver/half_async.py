"""Half-async training on the trainer (fleet's ``create_half_async_strategy``, Fluid 1.8's
``HalfAsyncCommunicator``).

In Fluid 1.8 a half-async trainer runs ``CPU_NUM`` threads on the same parameters. Each
thread queues its batch's gradients and waits at a barrier. When every thread has arrived
(``communicator_max_merge_var_num`` gradients queued, forced to ``CPU_NUM``), the
communicator averages the queued gradients of each variable and sends them. It then sends a
batch barrier to every pserver, receives the parameters, sends a fetch barrier and releases
the threads. The pservers apply each message as it arrives, as in async mode, so trainers never
wait for each other.

oar's executor runs one batch at a time, so the ``K`` batches that Fluid's threads run side by
side on the same parameters run here one after the other. ``send`` queues the step's gradients
(a running sum; SelectedRows rows are concatenated). ``send_barrier`` counts the step, and
every ``K``-th step it sends the average with one ``SEND`` per pserver, then ``BARRIER``.
``recv`` asks for the parameters only after such a flush, and between flushes returns the
values it last received. ``exe.close()`` first flushes the steps still queued (Fluid's
threads that run out of data lower the barrier's trigger, so their gradients are sent too).
``K`` is the fleet strategy's ``communicator_max_merge_var_num`` (``fleet.init_worker()``
reads it), else ``CPU_NUM``, else 1.
"""

from __future__ import annotations

import os
import threading
from typing import Any

import numpy as np
from oar.api import SelectedRows

from oar_dist.pserver import wire

_lock = threading.Lock()
_mergers: dict = {}
_flags: dict = {}


def configure(flags: dict) -> None:
    """The trainer runtime flags of the fleet strategy (``fleet.init_worker``)."""
    _flags.clear()
    _flags.update(flags or {})


def merge_steps() -> int:
    raw = _flags.get("communicator_max_merge_var_num") or os.environ.get("CPU_NUM") or 1
    try:
        k = int(raw)
    except ValueError:
        raise ValueError(
            f"half-async training: communicator_max_merge_var_num / CPU_NUM must be a positive "
            f"integer, given {raw!r}"
        ) from None
    if k < 1:
        raise ValueError(f"half-async training: merge {k} steps? It must be at least 1")
    return k


class Merger:
    """The gradients a trainer queued since its last flush."""

    def __init__(self, trainer_id: int, k: int) -> None:
        self.trainer_id, self.k = trainer_id, k
        self.sums: dict = {}  # name -> dense running sum, or [SelectedRows, ...]
        self.route: dict = {}  # name -> endpoint
        self.endpoints: list = []
        self.steps = 0
        self.fresh = True  # parameters must be read (first step, or after a flush)
        self.cache: dict = {}

    def add(self, names: list, values: list, eps: list) -> None:
        for n, v, ep in zip(names, values, eps):
            self.route[n] = ep
            if isinstance(v, SelectedRows):
                self.sums.setdefault(n, []).append(v)
            elif n in self.sums:
                self.sums[n] += v
            else:
                self.sums[n] = np.array(v, copy=True)

    def barrier(self, endpoints: list) -> None:
        self.endpoints = list(endpoints)
        self.steps += 1
        if self.steps >= self.k:
            self.flush()

    def flush(self) -> None:
        """Send the average of the queued steps' gradients, then a barrier to every pserver."""
        from oar_dist.pserver.client import get_client

        if not self.steps:
            return
        groups: dict = {}
        for n, total in self.sums.items():
            groups.setdefault(self.route[n], []).append((n, self._average(total)))
        for ep, tensors in groups.items():
            get_client(ep, self.trainer_id).post(wire.Message(wire.SEND, tensors=tuple(tensors)))
        for ep in self.endpoints:
            get_client(ep, self.trainer_id).post(wire.Message(wire.BARRIER))
        self.sums, self.steps, self.fresh = {}, 0, True

    def _average(self, total: Any) -> Any:
        scale = 1.0 / self.steps
        if isinstance(total, list):
            rows = np.concatenate([v.row_array for v in total])
            value = np.concatenate([np.asarray(v.value) for v in total])
            return SelectedRows(rows, total[0].height(), value * value.dtype.type(scale))
        if self.steps > 1:
            total *= total.dtype.type(scale)
        return total


def merger(trainer_id: int) -> Merger:
    m = _mergers.get(trainer_id)
    if m is None:
        with _lock:
            m = _mergers.setdefault(trainer_id, Merger(trainer_id, merge_steps()))
    return m


def flush_all() -> None:
    """Send what every trainer of this process still queued (before ``COMPLETE``)."""
    with _lock:
        mergers = list(_mergers.values())
        _mergers.clear()
    for m in mergers:
        m.flush()
