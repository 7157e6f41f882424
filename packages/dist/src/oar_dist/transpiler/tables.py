"""Distributed lookup tables in the pserver rewrite (``embedding(..., is_distributed=True)``).

A table of ``dict_size`` rows becomes one hashed shard per pserver (``emb.block0`` on the first
pserver, ...): any int64 id belongs to shard ``shard_of(id, n)`` (see
``oar_dist.pserver.hashed``), each shard holds up to ``capacity(dict_size, n)`` rows in slots
given out as ids arrive, and its id -> slot map lives in ``emb.block0@IDS``. Only the pservers
hold the table. On the trainer, ``lookup_table`` becomes ``distributed_lookup_table`` (prefetch
of the rows a batch needs), its gradient op becomes ``distributed_lookup_table_grad`` (no read
of the table), and the gradient (rows keyed by id) is cut by ``shard_selected_rows`` and sent
shard by shard. The table's initializer leaves the trainer's startup program; the pservers draw
each row from it when its id first arrives (``oar_dist.pserver.row_init``).
"""

from __future__ import annotations

from oar_dist.pserver.hashed import capacity, ids_name
from oar_dist.pserver.row_init import spec
from oar_dist.transpiler.slicing import ParamBlock

LOOKUPS = {"lookup_table": 1, "lookup_table_v2": 2}
GRADS = {"lookup_table_grad": 1, "lookup_table_v2_grad": 2}


def _attrs(op) -> dict:
    return {n: op.attr(n) for n in op.attr_names}


def find_tables(block) -> dict:
    """Table parameter -> the lookup ops that read it with ``is_distributed``."""
    tables: dict = {}
    for op in block.ops:
        if op.type in LOOKUPS and op.has_attr("is_distributed") and op.attr("is_distributed"):
            tables.setdefault(op.input("W")[0], []).append(op)
    return tables


def table_blocks(param: str, shape, eps: list) -> list:
    """One hashed shard per pserver, each of ``capacity(dict_size, len(eps))`` rows."""
    height = int(shape[0])
    cap = capacity(height, len(eps))
    blocks = []
    for i, ep in enumerate(eps):
        b = ParamBlock(param, i, cap, 0, (cap,) + tuple(shape[1:]), False)
        b.endpoint = ep
        blocks.append(b)
    return blocks


def init_specs(tables: dict, startup) -> dict:
    """Table -> the description of its initializer (the pservers draw rows from it)."""
    creators = {}
    for op in startup.global_block().ops:
        for n in op.output_arg_names:
            creators.setdefault(n, op)
    out = {}
    for t in tables:
        op = creators.get(t)
        if op is None:
            raise ValueError(
                f"DistributeTranspiler: no op of the startup program initialises the distributed "
                f"table '{t}'"
            )
        out[t] = spec(op.type, _attrs(op), t)
    return out


def table_info(b: ParamBlock, shards: int, height: int, state: list) -> dict:
    """What a pserver program records about a shard it holds (``_oar_pserver['tables']``)."""
    return {
        "table": b.param,
        "ids": ids_name(b.name),
        "shard": b.index,
        "shards": shards,
        "capacity": b.rows,
        "height": height,
        "state": state,
    }


def check_tables(tables: dict, params: list, block, optimize_ops: list) -> None:
    skip = {id(op) for op in optimize_ops}
    for t in tables:
        if t not in params:
            raise ValueError(
                f"DistributeTranspiler: the distributed table '{t}' (embedding with "
                f"is_distributed=True) is not trained by the program: a distributed table must be "
                f"a trainable parameter updated by the optimizer"
            )
        users = [
            op.type
            for op in block.ops
            if t in op.input_arg_names
            and op.type not in LOOKUPS
            and op.type not in GRADS
            and id(op) not in skip
        ]
        if users:
            raise NotImplementedError(
                f"DistributeTranspiler: the distributed table '{t}' is also read by {users}; "
                f"a table kept on the pservers can only be read by embedding lookups"
            )


def rewrite_lookups(block, tables: dict, blocks_of: dict, trainer_id: int, var_meta: dict) -> None:
    """Swap the lookups of distributed tables (and their gradient ops) for the trainer's ops."""
    i = 0
    while i < len(block.ops):
        op = block.ops[i]
        w = op.input("W")[0] if "W" in op.input_names and op.input("W") else None
        if w in tables and (op.type in LOOKUPS or op.type in GRADS):
            new = (
                _forward(op, w, blocks_of[w], trainer_id, var_meta)
                if op.type in LOOKUPS
                else _grad(op, w, var_meta)
            )
            block._insert_op(i, *new)
            block._remove_op(i + 1)
        i += 1


def _forward(op, w: str, blocks: list, trainer_id: int, var_meta: dict) -> tuple:
    meta = var_meta[w]
    attrs = {
        "table_names": [b.name for b in blocks],
        "endpoints": [b.endpoint for b in blocks],
        "height": int(meta.shape[0]),
        "padding_idx": op.attr("padding_idx"),
        "trainer_id": trainer_id,
        "lookup_table_version": LOOKUPS[op.type],
        "emb_dim": int(meta.shape[1]),
        "dtype": str(meta.dtype),
        "op_role": op.attr("op_role") if op.has_attr("op_role") else 0,
    }
    return ("distributed_lookup_table", {"Ids": op.input("Ids")}, {"Out": op.output("Out")}, attrs)


def _grad(op, w: str, var_meta: dict) -> tuple:
    attrs = {
        "height": int(var_meta[w].shape[0]),
        "padding_idx": op.attr("padding_idx"),
        "lookup_table_version": GRADS[op.type],
    }
    if op.has_attr("op_role"):
        attrs["op_role"] = op.attr("op_role")
    ins = {"Ids": op.input("Ids"), "Out@GRAD": op.input("Out@GRAD")}
    return ("distributed_lookup_table_grad", ins, {"W@GRAD": op.output("W@GRAD")}, attrs)


def drop_initializers(startup, tables: dict) -> None:
    """The trainer's startup program no longer creates the tables (the pservers do)."""
    block = startup.global_block()
    for i in range(len(block.ops) - 1, -1, -1):
        if set(block.ops[i].output_arg_names) & set(tables):
            block._remove_op(i)


_CLIP_READERS = ("squared_l2_norm",)  # reads a SelectedRows gradient as it is (rows merged)


def rewrite_clipping(block, tables: dict, trainer_ops: list) -> None:
    """Gradient clipping by global norm on the trainer, with a distributed table's gradient (rows
    keyed by id) kept sparse: its squared norm merges the rows (``squared_l2_norm``), and it is
    scaled by ``scale_selected_rows`` instead of a densifying ``elementwise_mul``."""
    grads = {t + "@GRAD" for t in tables}
    kept = {id(op) for op in trainer_ops}
    i = 0
    while i < len(block.ops):
        op = block.ops[i]
        reads = grads & set(op.input_arg_names)
        if id(op) in kept and reads:
            if op.type == "elementwise_mul" and op.input("X")[0] in grads:
                out = op.output("Out")
                ins = {"X": op.input("X"), "Scale": op.input("Y")}
                block._insert_op(i, "scale_selected_rows", ins, {"Out": out}, _role_attrs(op))
                block._remove_op(i + 1)
                block.var(out[0]).type = "selected_rows"
            elif op.type not in _CLIP_READERS:
                raise NotImplementedError(
                    f"DistributeTranspiler: '{op.type}' reads the gradient of the distributed "
                    f"table {sorted(reads)} on the trainer; with distributed tables, gradient "
                    f"clipping by global norm (GradientClipByGlobalNorm) is supported"
                )
        i += 1


def _role_attrs(op) -> dict:
    return {"op_role": op.attr("op_role")} if op.has_attr("op_role") else {}
