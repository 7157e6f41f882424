"""hash: each row of an integer tensor hashed ``num_hash`` times (XXH64 of the row's bytes,
seeds 0 .. num_hash-1) modulo ``mod_by``; Out is [rows, num_hash, 1] int64 with X's LoD."""

from __future__ import annotations

from oar.ops._infer import int_check, meta
from oar.registry import Attr, OpDef


def _infer(ins, attrs):
    x = ins["X"]
    if x.dtype not in ("int32", "int64"):
        raise TypeError(f"X must hold int32 or int64 ids, given {x.dtype}")
    if len(x.shape) != 2:
        raise ValueError(f"X must be 2-D [rows, ids per row], given {list(x.shape)}")
    return {"Out": meta((x.shape[0], attrs["num_hash"], 1), "int64", x.lod_level)}


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "hash",
            ["X"],
            ["Out"],
            {"num_hash": Attr(int, 1, int_check(1)), "mod_by": Attr(int, 100000, int_check(1))},
            infer_shape=_infer,
            share_lod=(("X", "Out"),),
            doc="XXH64 hashes of every row, modulo mod_by (Fluid's hash op)",
        )
    )
