"""``fluid.contrib.load_persistables_for_increment`` / ``load_persistables_for_inference``: loading
a checkpoint that holds a distributed lookup table (Fluid 1.8.5's signatures).

A checkpoint written by ``fluid.io.save_persistables`` on a transpiled trainer program (see
docs/dist.md) holds each table twice: whole, under its own name, and as the pservers' row
blocks (``emb.block0``, ...). These helpers read either.
"""

from __future__ import annotations

import os
from typing import Any


def _tables(program: Any, fn: str) -> dict:
    info = getattr(program, "_oar_pserver", None)
    if info is None:
        raise ValueError(
            f"{fn}: program must be a pserver program written by DistributeTranspiler "
            f"(get_pserver_program or get_startup_program), given {type(program).__name__}"
        )
    return info.get("tables", {})


def _set(name: str, value: Any) -> None:
    from oar import fluid

    fluid.global_scope().var(name).get_tensor().set(value, fluid.CPUPlace())


def _read(path: str, names: list) -> dict:
    from oar import fluid

    missing = [n for n in names if not os.path.isfile(os.path.join(path, n))]
    if missing:
        raise FileNotFoundError(f"no file {missing[0]!r} in {path!r}")
    return fluid.io.load_program_state(path, var_list=names)


def load_persistables_for_increment(
    dirname: str, executor: Any, program: Any, lookup_table_var: str, lookup_table_var_path: str
) -> None:
    """On a pserver: its dense variables from ``dirname``, and its row block of the distributed
    table ``lookup_table_var`` from ``lookup_table_var_path`` (a directory holding the block's
    file or the whole table's, or the whole table's file itself)."""
    from oar import fluid

    fn = "load_persistables_for_increment"
    tables = _tables(program, fn)
    mine = {n: t for n, t in tables.items() if t[0] == lookup_table_var}
    if not mine:
        raise ValueError(
            f"{fn}: '{lookup_table_var}' is not a distributed table held by this pserver (it holds "
            f"{sorted({t[0] for t in tables.values()}) or 'none'})"
        )
    fluid.io.load_vars(
        executor, dirname, program, predicate=lambda v: v.persistable and v.name not in mine
    )
    for name, (origin, offset, rows) in mine.items():
        path = lookup_table_var_path
        if os.path.isdir(path) and os.path.isfile(os.path.join(path, name)):
            _set(name, _read(path, [name])[name])
            continue
        if os.path.isdir(path):
            path = os.path.join(path, origin)
        whole = _read(os.path.dirname(path) or ".", [os.path.basename(path)])
        _set(name, next(iter(whole.values()))[offset : offset + rows])


def load_persistables_for_inference(
    dirname: str, executor: Any, program: Any, lookup_table_var_name: str
) -> None:
    """For a single-process (inference) ``program`` that reads the distributed table
    ``lookup_table_var_name``: every persistable from ``dirname``, the table from its whole file
    or, without one, put together from the pservers' block files (``name.block0``, ...)."""
    from oar import fluid

    fn = "load_persistables_for_inference"
    block = program.global_block()
    if not block.has_var(lookup_table_var_name):
        raise ValueError(f"{fn}: the program has no variable '{lookup_table_var_name}'")
    fluid.io.load_vars(
        executor,
        dirname,
        program,
        predicate=lambda v: v.persistable and v.name != lookup_table_var_name,
    )
    name = lookup_table_var_name
    if os.path.isfile(os.path.join(dirname, name)):
        _set(name, _read(dirname, [name])[name])
        return
    parts = []
    while os.path.isfile(os.path.join(dirname, f"{name}.block{len(parts)}")):
        parts.append(f"{name}.block{len(parts)}")
    if not parts:
        raise FileNotFoundError(
            f"{fn}: {dirname!r} holds neither '{name}' nor its blocks '{name}.block0', ..."
        )
    import numpy as np

    values = _read(dirname, parts)
    _set(name, np.concatenate([values[p] for p in parts]))
