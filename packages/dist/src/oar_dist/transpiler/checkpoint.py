"""``fluid.io.save_persistables(exe, dirname, trainer_program)`` on a transpiled trainer: a complete
checkpoint in one directory.

1. The trainer writes the persistables it holds (its parameters as last received), leaving
   out the distributed tables, which it never holds.
2. Every pserver writes the variables it holds (parameter blocks, optimizer state,
   learning-rate counters) under their pserver names (``w.block0``, ``emb_moment1_0.block1``):
   ``load_persistables`` on a pserver's (startup) program reads these. Variables a pserver
   holds whole keep their names and replace the trainer's copies (the pserver's are current).
   A hashed table shard (``emb.block0``) is written in slot order with its id -> slot map
   (``emb.block0@IDS``), and so is its per-row optimizer state.
3. Variables cut into blocks that the trainer does not hold whole (a distributed table, the
   optimizer state of a sliced parameter) are also written whole under their own names, block
   by block pulled from the pservers, so a single-process program loads the directory too.
   A distributed table is written whole only when every id it holds lies in ``[0, dict_size)``:
   each row at its id, the rows of ids never seen as the pservers would draw them.
   (This step holds the whole variable in the trainer for a moment: see docs/dist.md.)

Only the first trainer (``trainer_id`` 0) writes; the others return at once, as in Fluid.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from oar_dist.pserver import wire
from oar_dist.pserver.client import get_client


def save_checkpoint(
    mode: Any, executor: Any, dirname: str, filename: Any = None, **kw: Any
) -> None:
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
    state = mode.table_state()
    local = [
        v
        for v in prog.list_vars()
        if v.persistable and v.name not in state and scope.find_var(v.name) is not None
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
        parts = sorted(parts, key=lambda p: _index(p[0]))
        table = _table_of(mode, origin)
        if table is None:
            whole = _pull_whole(mode, origin, parts)
        else:
            whole = unshard(mode, table, origin, parts)
        if whole is not None:
            _write(executor, dirname, origin, whole, mode, **kw)


def _index(name: str) -> int:
    _, _, idx = name.rpartition(".block")
    return int(idx) if idx.isdigit() else 0


def _pull(ep: str, names: list) -> dict:
    want = tuple((n, np.empty(0, np.uint8)) for n in names)
    return dict(get_client(ep, 0).request(wire.Message(wire.GET, tensors=want)).tensors)


def _pull_whole(mode: Any, origin: str, parts: list) -> np.ndarray:
    """A sliced variable put back together (state shaped like its parameter's block, e.g. a
    moment, is concatenated; other state, e.g. a beta power, is the same in every block)."""
    blocks = [_pull(ep, [n])[n] for n, ep in parts]
    rows = sum(b.shape[0] for b in blocks) if blocks[0].ndim else 0
    if len(blocks) == 1 or list(mode.var_meta[origin].shape[:1]) != [rows]:
        return blocks[0]
    return np.concatenate(blocks)


def _table_of(mode: Any, origin: str) -> Any:
    for t in mode.tables:
        if origin in mode.closure.get(t, ()):
            return t
    return None


def unshard(mode: Any, table: str, origin: str, parts: list) -> Any:
    """The hashed table ``table`` (or its per-row state ``origin``) in id order, or None when an
    id lies outside ``[0, dict_size)`` (the whole table then has no file of its own)."""
    from oar_dist.pserver.hashed import ids_name

    meta = mode.var_meta[origin]
    shape = [int(d) for d in mode.var_meta[table].shape]
    if [int(d) for d in meta.shape] != shape:  # e.g. a beta power: the same in every shard
        return _pull(parts[0][1], [parts[0][0]])[parts[0][0]]
    pulled = []
    for n, ep in parts:
        shard = f"{table}.block{_index(n)}"
        got = _pull(ep, [n, ids_name(shard)])
        store = got[ids_name(shard)]
        ids = store[1 : 1 + int(store[0])]
        if ids.size and (ids.min() < 0 or ids.max() >= shape[0]):
            return None
        pulled.append((ids, got[n][: ids.size]))
    whole = _fresh(mode, table, origin, shape, meta.dtype)
    for ids, rows in pulled:
        whole[ids] = rows
    return whole


def _fresh(mode: Any, table: str, origin: str, shape: list, dtype: Any) -> np.ndarray:
    """Rows never seen: the table's rows as the pservers would draw them; state: its start value."""
    from oar_dist.pserver.row_init import init_rows

    out = np.empty(shape, dtype=np.dtype(dtype))
    if origin != table:
        out.fill(_start_value(mode, origin))
        return out
    spec = mode.table_inits[table]
    for at in range(0, shape[0], 65536):  # in chunks: no float64 twin of the whole table
        ids = np.arange(at, min(shape[0], at + 65536), dtype=np.int64)
        out[at : at + ids.size] = init_rows(spec, ids, shape[1], out.dtype)
    return out


def _start_value(mode: Any, origin: str) -> float:
    for op in mode.origin_startup.global_block().ops:
        if origin in op.output_arg_names and op.type == "fill_constant":
            return float(op.attr("value"))
    return 0.0


def _write(executor, dirname, origin: str, whole: np.ndarray, mode: Any, **kw) -> None:
    from oar import fluid

    meta = mode.var_meta[origin]
    prog = fluid.Program()
    var = prog.global_block().create_var(
        name=origin, shape=list(whole.shape), dtype=meta.dtype, persistable=True
    )
    scope = fluid.Scope()
    scope.var(origin).get_tensor().set(whole, fluid.CPUPlace())
    with fluid.scope_guard(scope):
        fluid.io.save_vars(executor, dirname, prog, vars=[var], **kw)
