"""Beam-search helpers: gather_tree (back-trace the kept ids through their parents)."""

from __future__ import annotations

from oar.registry import OpDef

_INTS = ("int32", "int64")


def _infer_gather_tree(ins, attrs):
    ids, parents = ins["Ids"], ins["Parents"]
    if ids.dtype not in _INTS or parents.dtype != ids.dtype:
        raise TypeError(
            f"Ids and Parents must be int64 (or int32) of one dtype, given {ids.dtype}, {parents.dtype}"
        )
    if len(ids.shape) != 3 or tuple(ids.shape) != tuple(parents.shape):
        raise ValueError(
            f"Ids and Parents must both be [max_time, batch, beam], given {list(ids.shape)}, "
            f"{list(parents.shape)}"
        )
    return {"Out": ids}


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "gather_tree",
            ["Ids", "Parents"],
            ["Out"],
            infer_shape=_infer_gather_tree,
            doc="full beam-search paths from per-step ids and parent beam indices",
        )
    )
