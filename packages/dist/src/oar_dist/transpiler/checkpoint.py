"""``fluid.io.save_persistables(exe, dirname, trainer_program)`` on a transpiled trainer: a complete
checkpoint in one directory.

1. The trainer writes the persistables it holds (its parameters as last received), leaving
   out the distributed tables, which it never holds.
2. Every pserver writes the variables it holds (parameter blocks, optimizer state,
   learning-rate counters) under their pserver names (``w.block0``, ``emb_moment1_0.block1``):
   ``load_persistables`` on a pserver's (startup) program reads these. Variables a pserver
   holds whole keep their names and replace the trainer's copies (the pserver's are current).
3. Variables cut into blocks that the trainer does not hold whole (a distributed table, the
   optimizer state of a sliced parameter) are also written whole under their own names, block
   by block pulled from the pservers, so a single-process program loads the directory too.
   (This step holds the whole variable in the trainer for a moment: see docs/dist.md.)

Only the first trainer (``trainer_id`` 0) writes; the others return at once, as in Fluid.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from oar_dist.pserver import wire
from oar_dist.pserver.client import get_client


def save_checkpoint(mode: Any, executor: Any, dirname: str, filename: Any = None, **kw: Any) -> None:
    """Write the job's complete checkpoint into ``dirname`` (``mode``: the transpiler's
    pserver mode that wrote the trainer program)."""
    from oar import fluid

    if mode.trainer_id != 0:
        return
    if filename is not None:
        raise NotImplementedError(
            "save_persistables(filename=...) on a transpiled trainer program: the pservers "
            "write their variables as separate files; call it with filename=None"
        )
    prog = mode.main
    scope = fluid.global_scope()
    local = [
        v
        for v in prog.list_vars()
        if v.persistable and v.name not in mode.tables and scope.find_var(v.name) is not None
    ]
    fluid.io.save_vars(executor, dirname, prog, vars=local, **kw)
    name = np.frombuffer(str(dirname).encode(), dtype=np.uint8)
    held = {}
    for ep in mode.eps:
        get_client(ep, 0).request(wire.Message(wire.SAVE, tensors=(("dirname", name),)))
        for origin, n in mode.get_pserver_program(ep)._oar_pserver["held"]:
            held.setdefault(origin, []).append((n, ep))
    dense = set(mode.params) - set(mode.tables)
    for origin, parts in held.items():
        if origin in dense or all(n == origin for n, _ in parts):
            continue  # the trainer's whole parameter, or written whole by its pserver
        _save_whole(executor, dirname, origin, sorted(parts, key=lambda p: _index(p[0])), mode, **kw)


def _index(name: str) -> int:
    _, _, idx = name.rpartition(".block")
    return int(idx) if idx.isdigit() else 0


def _save_whole(executor, dirname, origin: str, parts: list, mode: Any, **kw) -> None:
    from oar import fluid

    meta = mode.var_meta[origin]
    blocks = []
    for n, ep in parts:
        reply = get_client(ep, 0).request(
            wire.Message(wire.GET, tensors=((n, np.empty(0, np.uint8)),))
        )
        blocks.append(dict(reply.tensors)[n])
    whole = blocks[0] if len(blocks) == 1 else np.concatenate(blocks)
    del blocks
    prog = fluid.Program()
    var = prog.global_block().create_var(
        name=origin, shape=list(whole.shape), dtype=meta.dtype, persistable=True
    )
    scope = fluid.Scope()
    scope.var(origin).get_tensor().set(whole, fluid.CPUPlace())
    with fluid.scope_guard(scope):
        fluid.io.save_vars(executor, dirname, prog, vars=[var], **kw)
