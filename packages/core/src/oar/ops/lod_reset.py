"""lod_reset: give a tensor a new LoD (from an attr, another tensor's LoD or its values),
or append one level to its LoD (Fluid's lod_append)."""

from __future__ import annotations

from oar.ops._infer import meta
from oar.registry import Attr, GradSpec, OpDef


def _infer(ins, attrs):
    x = ins["X"]
    y = ins.get("Y")
    level = 1
    if attrs["append"]:
        level = x.lod_level + 1
    elif y is not None and y.lod_level:
        level = y.lod_level
    return {"Out": meta(x.shape, x.dtype, level)}


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "lod_reset",
            ["X", "Y?"],
            ["Out"],
            {"target_lod": Attr(list, []), "append": Attr(bool, False)},
            infer_shape=_infer,
            kernel_dtype="X",
            grad=GradSpec(("Out@GRAD", "X"), ("X@GRAD",)),
            doc="the data of X with a new (or one more) LoD level",
        )
    )
