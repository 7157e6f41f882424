"""Reductions over the sequences of a LoDTensor: sequence_pool and sequence_softmax.

Both work on the last (finest) LoD level. sequence_pool turns each sequence into
one row (its output drops that level); sequence_softmax normalises within each
sequence and keeps the LoD.
"""

from __future__ import annotations

from oar.ops._infer import check_float, meta, one_of
from oar.registry import Attr, GradSpec, OpDef

POOL_TYPES = ("AVERAGE", "SUM", "SQRT", "MAX", "LAST", "FIRST")


def _infer_pool(ins, attrs):
    x = ins["X"]
    check_float(ins, "X")
    if len(x.shape) < 1:
        raise ValueError(f"X must have at least one dim (the rows), given shape {list(x.shape)}")
    shape = (-1,) + tuple(x.shape[1:])
    level = max(x.lod_level - 1, 0)
    return {"Out": meta(shape, x.dtype, level), "MaxIndex": meta(shape, "int32", level)}


def _infer_softmax(ins, attrs):
    x = ins["X"]
    check_float(ins, "X")
    if not (len(x.shape) == 1 or (len(x.shape) == 2 and x.shape[1] in (1, -1))):
        raise ValueError(f"X must have shape [N] or [N, 1], given {list(x.shape)}")
    return {"Out": x}


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "sequence_pool",
            ["X"],
            ["Out", "MaxIndex"],
            {
                "pooltype": Attr(str, "AVERAGE", one_of(*POOL_TYPES)),
                "is_test": Attr(bool, False),
                "pad_value": Attr(float, 0.0),
            },
            infer_shape=_infer_pool,
            grad=GradSpec(("Out@GRAD", "X", "MaxIndex"), ("X@GRAD",)),
            doc="pool each sequence of the last LoD level into one row",
        )
    )
    registry.register_op(
        OpDef(
            "sequence_softmax",
            ["X"],
            ["Out"],
            {"use_cudnn": Attr(bool, False), "data_format": Attr(str, "AnyLayout")},
            infer_shape=_infer_softmax,
            grad=GradSpec(("X", "Out", "Out@GRAD"), ("X@GRAD",)),
            share_lod=(("X", "Out"),),
            doc="softmax within each sequence of the last LoD level",
        )
    )
