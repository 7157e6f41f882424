"""``fluid.contrib.load_persistables_for_increment`` / ``load_persistables_for_inference``: loading
a checkpoint that holds a distributed lookup table (Fluid 1.8.5's signatures).

A checkpoint written by ``fluid.io.save_persistables`` on a transpiled trainer program (see
docs/dist.md) holds each table as the pservers' hashed shards (``emb.block0`` with its id map
``emb.block0@IDS``, ...) and, when every id lies in ``[0, dict_size)``, whole under its own
name. These helpers read either.
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


def _whole_source(path: str, origin: str) -> tuple:
    """(ids, rows) of the table at ``path``: its whole file (every id of [0, dict_size)), or
    else the shard files of a job with any number of pservers (``origin.block0`` with its map
    ``origin.block0@IDS``, ...)."""
    import numpy as np

    from oar_dist.pserver.hashed import ids_name

    if os.path.isdir(path) and not os.path.isfile(os.path.join(path, origin)):
        parts = []
        while os.path.isfile(os.path.join(path, f"{origin}.block{len(parts)}")):
            parts.append(f"{origin}.block{len(parts)}")
        if not parts:
            raise FileNotFoundError(
                f"no file {origin!r} nor shards '{origin}.block0', ... in {path!r}"
            )
        got = _read(path, parts + [ids_name(p) for p in parts])
        ids, rows = [], []
        for p in parts:
            store = got[ids_name(p)]
            n = int(store[0])
            ids.append(store[1 : 1 + n])
            rows.append(got[p][:n])
        return np.concatenate(ids), np.concatenate(rows)
    if os.path.isdir(path):
        path = os.path.join(path, origin)
    whole = next(iter(_read(os.path.dirname(path) or ".", [os.path.basename(path)]).values()))
    return np.arange(whole.shape[0], dtype=np.int64), whole


def _shard_from(path: str, origin: str, info: dict) -> tuple:
    """This shard's rows and id map from the whole table or another job's shards: every id
    there that belongs to this shard."""
    import numpy as np

    from oar_dist.pserver.hashed import shard_of

    ids, rows_all = _whole_source(path, origin)
    mine = shard_of(ids, info["shards"]) == info["shard"]
    ids, picked = ids[mine], rows_all[mine]
    if ids.size > info["capacity"]:
        raise ValueError(
            f"load_persistables_for_increment: the table '{origin}' in {path!r} has {ids.size} "
            f"rows for shard {info['shard']}, over its capacity of {info['capacity']}"
        )
    rows = np.zeros((info["capacity"],) + rows_all.shape[1:], dtype=rows_all.dtype)
    rows[: ids.size] = picked
    store = np.zeros(info["capacity"] + 1, dtype=np.int64)
    store[0] = ids.size
    store[1 : 1 + ids.size] = ids
    return rows, store


def _same_layout(path: str, name: str, info: dict) -> bool:
    """``path`` holds this very shard (a job with the same pservers: the same capacity, and
    every id in the map is this shard's)."""
    if not (os.path.isdir(path) and os.path.isfile(os.path.join(path, name))):
        return False
    if not os.path.isfile(os.path.join(path, info["ids"])):
        return False
    from oar_dist.pserver.hashed import shard_of

    store = _read(path, [info["ids"]])[info["ids"]]
    if store.size != info["capacity"] + 1:
        return False
    ids = store[1 : 1 + int(store[0])]
    return bool((shard_of(ids, info["shards"]) == info["shard"]).all())


def load_persistables_for_increment(
    dirname: str, executor: Any, program: Any, lookup_table_var: str, lookup_table_var_path: str
) -> None:
    """On a pserver: its dense variables from ``dirname``, and its shard of the distributed
    table ``lookup_table_var`` from ``lookup_table_var_path``: a directory holding the shard's
    files (rows and id map, with its optimizer state in ``dirname``); or the whole table's file
    (or a directory holding it: the shard then holds every id of ``[0, dict_size)`` that is its
    own); or the shard files of a job with another number of pservers (the shard takes the ids
    that are its own). In the last two cases its optimizer state starts afresh."""
    from oar import fluid

    fn = "load_persistables_for_increment"
    tables = _tables(program, fn)
    mine = {n: t for n, t in tables.items() if t["table"] == lookup_table_var}
    if not mine:
        raise ValueError(
            f"{fn}: '{lookup_table_var}' is not a distributed table held by this pserver (it holds "
            f"{sorted({t['table'] for t in tables.values()}) or 'none'})"
        )
    path = lookup_table_var_path
    skip, same = set(), {}
    for name, info in mine.items():
        skip |= {name, info["ids"]}
        same[name] = _same_layout(path, name, info)
        if not same[name]:  # rows in another order: the optimizer state starts afresh
            skip |= set(info["state"])
    fluid.io.load_vars(
        executor, dirname, program, predicate=lambda v: v.persistable and v.name not in skip
    )
    for name, info in mine.items():
        if same[name]:
            got = _read(path, [name, info["ids"]])
            _set(name, got[name])
            _set(info["ids"], got[info["ids"]])
            continue
        rows, store = _shard_from(path, info["table"], info)
        _set(name, rows)
        _set(info["ids"], store)


def load_persistables_for_inference(
    dirname: str, executor: Any, program: Any, lookup_table_var_name: str
) -> None:
    """For a single-process (inference) ``program`` that reads the distributed table
    ``lookup_table_var_name``: every persistable from ``dirname``, the table from its whole file
    or, without one, put together from the pservers' shard files (``name.block0`` with its id
    map ``name.block0@IDS``, ...; every id must lie in ``[0, dict_size)``; rows of ids no shard
    holds are zero)."""
    import numpy as np
    from oar import fluid

    from oar_dist.pserver.hashed import ids_name

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
            f"{fn}: {dirname!r} holds neither '{name}' nor its shards '{name}.block0', ..."
        )
    values = _read(dirname, parts + [ids_name(p) for p in parts])
    var = block.var(name)
    height = int(var.shape[0])
    table = np.zeros([height] + [int(d) for d in var.shape[1:]], dtype=values[parts[0]].dtype)
    for p in parts:
        store = values[ids_name(p)]
        ids = store[1 : 1 + int(store[0])]
        if ids.size and (ids.min() < 0 or ids.max() >= height):
            raise ValueError(
                f"{fn}: the shard '{p}' in {dirname!r} holds ids outside [0, {height}), which "
                f"a table of {height} rows cannot place"
            )
        table[ids] = values[p][: ids.size]
    _set(name, table)
