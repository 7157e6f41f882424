"""The pserver loop behind ``listen_and_serv``.

The variables the pserver owns live in a private :class:`Scope`; the
optimize ops of each parameter block are a plain Program (serialized in the
op's attrs) run by an Executor on that scope, after the learning-rate
program when there is one.

- **sync** (``distributed_mode`` 0): gradients are kept per trainer until
  every trainer still training has sent ``send_barrier``; then each gradient
  is averaged over the trainers that sent it, the programs run once, and the
  ``GET`` requests waiting for that round are answered. A trainer's ``GET`` is
  answered when the rounds applied catch up with the barriers it sent, so a
  fast trainer never reads parameters of a round it is not part of.
- **async** (1) and **half-async** (2): each trainer's gradients are applied
  as they arrive; ``GET`` is answered at once (with copies, since the next
  update writes the arrays in place while ZeroMQ may still be sending).

The loop ends when every trainer sent ``COMPLETE`` (``exe.close()``). A
trainer whose connection drops before that, or that leaves the others waiting
at a barrier for longer than ``OAR_PSERVER_TIMEOUT``, ends it with a
:class:`PserverError` naming the trainer (the pserver process exits non-zero).
"""

from __future__ import annotations

import json
import time
from typing import Any

import numpy as np
from oar.api import SelectedRows

from oar_dist.pserver import wire
from oar_dist.pserver.client import transport
from oar_dist.pserver.errors import PserverError
from oar_dist.pserver.table_shards import ShardRefused, TableShards
from oar_dist.pserver.transport import reply_timeout

SYNC, ASYNC, HALF_ASYNC = 0, 1, 2


def _array(value: Any) -> Any:
    from oar.api import LoDTensor

    return value._array if isinstance(value, LoDTensor) else value


class PserverLoop:
    def __init__(self, values: list, attrs: dict) -> None:
        from oar.api import CPUPlace, Executor, LoDTensor, Scope, program_from_dict

        self.endpoint = attrs["endpoint"]
        self.fanin = attrs["Fanin"]
        self.mode = attrs["distributed_mode"]
        if not attrs["sync_mode"] and self.mode == SYNC:
            self.mode = ASYNC
        self.names = list(attrs["var_names"])
        if len(self.names) != len(values):
            raise ValueError(
                f"listen_and_serv: {len(values)} variables but {len(self.names)} var_names"
            )
        self.scope = Scope()
        for n, v in zip(self.names, values):
            self.scope.var(n).value = v if not isinstance(v, np.ndarray) else LoDTensor(v)
        self.programs = [program_from_dict(d) for d in json.loads(attrs["optimize_programs"])]
        self.lr_program = (
            program_from_dict(json.loads(attrs["lr_program"])) if attrs["lr_program"] else None
        )
        self.grad_block: dict = {}
        for item in attrs["grad_to_block_id"]:
            g, _, idx = str(item).rpartition(":")
            self.grad_block[g] = int(idx)
        self.tables = set(attrs["tables"])
        self.shards = TableShards(attrs.get("table_specs", ""), self.scope, self.endpoint)
        self.exe = Executor(CPUPlace())
        self.server = transport().server(self.endpoint)
        self.pending: dict = {}  # grad -> {trainer: value}
        self.barrier: set = set()
        self.trainer_round: dict = {}
        self.rounds = 0
        self.done: set = set()
        self.deferred: list = []
        self.wait_since = 0.0
        self.timeout = reply_timeout()
        self.stopped = False

    # --- the loop ------------------------------------------------------------------------
    def run(self) -> None:
        handlers = {
            wire.SEND: self._send,
            wire.BARRIER: self._barrier,
            wire.GET: self._read,
            wire.PREFETCH: self._read,
            wire.FETCH_BARRIER: self._ack,
            wire.COMPLETE: self._complete,
            wire.SAVE: self._save,
        }
        while len(self.done) < self.fanin and not self.stopped:
            ev = self.server.poll(0.5)
            if ev is None:
                self._check_stall()
                continue
            kind, peer, msg = ev
            if kind == "gone":
                if peer.trainer not in self.done:
                    raise PserverError(
                        f"pserver {self.endpoint}: trainer {peer.trainer} disconnected before "
                        f"calling exe.close() (killed or crashed?); stopping this pserver"
                    )
                continue
            handler = handlers.get(msg.kind)
            if handler is None or not 0 <= peer.trainer < self.fanin:
                self.server.error(
                    peer,
                    f"pserver {self.endpoint}: unexpected {wire.KIND_NAMES[msg.kind]} message "
                    f"from trainer {peer.trainer} (this job has {self.fanin} trainers)",
                    msg.seq,
                )
                continue
            try:
                handler(peer, msg)
            except (_Refused, ShardRefused) as exc:
                self.server.error(peer, f"pserver {self.endpoint}: {exc}", msg.seq)

    def stop(self) -> None:
        """End :meth:`run` within half a second (from another thread)."""
        self.stopped = True

    def close(self) -> None:
        self.server.close()

    def values(self) -> list:
        return [_array(self.scope.find_var(n).value) for n in self.names]

    # --- handlers ------------------------------------------------------------------------
    def _ack(self, peer, msg) -> None:
        self.server.send(peer, wire.Message(wire.REPLY, seq=msg.seq))

    def _send(self, peer, msg) -> None:
        for name, value in msg.tensors:
            if name not in self.grad_block:
                raise _Refused(
                    f"trainer {peer.trainer} sent '{name}', which is not a gradient this pserver "
                    f"updates (it updates {sorted(self.grad_block)})"
                )
            self.shards.check_grad(name, value)
        if self.mode == SYNC:
            for name, value in msg.tensors:
                self.pending.setdefault(name, {})[peer.trainer] = value
        else:
            self._apply({name: [value] for name, value in msg.tensors})
        self._ack(peer, msg)

    def _barrier(self, peer, msg) -> None:
        t = peer.trainer
        self.trainer_round[t] = self.trainer_round.get(t, 0) + 1
        self._ack(peer, msg)
        if self.mode != SYNC:
            return
        if not self.barrier:
            self.wait_since = time.monotonic()
        self.barrier.add(t)
        self._maybe_round()

    def _read(self, peer, msg) -> None:
        """GET (whole variables) or PREFETCH (rows of a table block); in sync mode answered
        once the rounds applied caught up with the barriers this trainer sent."""
        check = self._check_get if msg.kind == wire.GET else self._check_prefetch
        check(peer, msg)
        if self.mode == SYNC and self.trainer_round.get(peer.trainer, 0) > self.rounds:
            self.deferred.append((peer, msg))
            return
        if msg.kind == wire.GET:
            self._reply_values(peer, msg)
        else:
            self._reply_rows(peer, msg)

    def _check_get(self, peer, msg) -> None:
        for name in msg.names():
            if self.scope.find_var(name) is None:
                raise _Refused(f"trainer {peer.trainer} asked for '{name}', which it does not hold")

    def _check_prefetch(self, peer, msg) -> None:
        for name, ids in msg.tensors:
            if name not in self.tables:
                raise _Refused(
                    f"trainer {peer.trainer} asked for rows of '{name}', which is not a "
                    f"distributed table this pserver holds (it holds {sorted(self.tables)})"
                )
            height = _array(self.scope.find_var(name).value).shape[0]
            if isinstance(ids, SelectedRows) or ids.dtype != np.int64 or ids.ndim != 1:
                raise _Refused(f"prefetch of '{name}': row ids must be a 1-D int64 tensor")
            hashed = name in self.shards.specs  # any int64 id; else row numbers of a block
            if not hashed and ids.size and (ids.min() < 0 or ids.max() >= height):
                raise _Refused(
                    f"prefetch of '{name}': row ids outside this block's rows [0, {height})"
                )

    def _reply_rows(self, peer, msg) -> None:
        rows = []
        for name, ids in msg.tensors:
            if name in self.shards.specs:
                rows.append((name, self.shards.prefetch(name, ids, peer.trainer)))
            else:
                rows.append((name, np.take(_array(self.scope.find_var(name).value), ids, axis=0)))
        tensors = tuple(rows)
        self.server.send(peer, wire.Message(wire.REPLY, seq=msg.seq, tensors=tensors))

    def _reply_values(self, peer, msg) -> None:
        copy = self.mode != SYNC
        tensors = []
        for name in msg.names():
            a = _array(self.scope.find_var(name).value)
            tensors.append((name, np.array(a) if copy else a))
        self.server.send(peer, wire.Message(wire.REPLY, seq=msg.seq, tensors=tuple(tensors)))

    def _complete(self, peer, msg) -> None:
        self.done.add(peer.trainer)
        self.barrier.discard(peer.trainer)
        self._ack(peer, msg)
        if self.mode == SYNC:
            self._maybe_round()

    def _save(self, peer, msg) -> None:
        """Write the variables this pserver holds into the directory named by the trainer
        (``fleet.save_persistables`` on the first trainer: one complete checkpoint)."""
        from oar import fluid

        raw = dict(msg.tensors).get("dirname")
        if raw is None:
            raise _Refused("save without a directory")
        dirname = bytes(np.asarray(raw, dtype=np.uint8)).decode()
        prog = fluid.Program()
        block = prog.global_block()
        for n in self.names:
            a = _array(self.scope.find_var(n).value)
            block.create_var(name=n, shape=list(a.shape), dtype=str(a.dtype), persistable=True)
        with fluid.scope_guard(self.scope):
            fluid.io.save_vars(self.exe, dirname, prog, vars=list(block.vars.values()))
        self._ack(peer, msg)

    # --- updates -------------------------------------------------------------------------
    def _maybe_round(self) -> None:
        live = set(range(self.fanin)) - self.done
        if not self.barrier or not live <= self.barrier:
            return
        grads = {g: list(by_trainer.values()) for g, by_trainer in self.pending.items()}
        self.pending, self.barrier = {}, set()
        self._apply(grads)
        self.rounds += 1
        waiting, self.deferred = self.deferred, []
        for peer, msg in waiting:
            self._read(peer, msg)

    def _apply(self, grads: dict) -> None:
        from oar.api import LoDTensor, SelectedRows

        if self.lr_program is not None:
            self.exe.run(self.lr_program, scope=self.scope)
        blocks = sorted({self.grad_block[g] for g in grads})
        for g, vals in grads.items():
            scale = 1.0 / len(vals)
            if isinstance(vals[0], SelectedRows):
                rows = np.concatenate([v.row_array for v in vals])
                value = np.concatenate([np.asarray(v.value) for v in vals]) * vals[
                    0
                ].value.dtype.type(scale)
                grad = SelectedRows(rows, vals[0].height(), value)
                if g in self.shards.by_grad:  # ids -> slots of the hashed shard
                    grad = self.shards.translate(g, grad)
                self.scope.var(g).value = grad
            else:
                if len(vals) == 1:  # read-only view of the frame: update ops only read it
                    total = vals[0]
                else:
                    total = vals[0] + vals[1]
                    for v in vals[2:]:
                        total += v
                    total *= total.dtype.type(scale)
                self.scope.var(g).value = LoDTensor(total)
        for b in blocks:
            self.exe.run(self.programs[b], scope=self.scope)

    def _check_stall(self) -> None:
        if self.barrier and time.monotonic() - self.wait_since > self.timeout:
            live = set(range(self.fanin)) - self.done
            missing = sorted(live - self.barrier)
            raise PserverError(
                f"pserver {self.endpoint}: trainers {missing} did not finish their step within "
                f"{self.timeout:g} s (OAR_PSERVER_TIMEOUT) while trainers {sorted(self.barrier)} "
                f"waited; stopping this pserver"
            )


class _Refused(Exception):
    """A request this pserver answers with an error and otherwise ignores."""


def serve(values: list, attrs: dict) -> list:
    """Run the loop until every trainer completed; the final values of ``var_names``."""
    loop = PserverLoop(values, attrs)
    try:
        loop.run()
    finally:
        loop.close()
    return loop.values()
