"""softmax along an axis (its gradient reads Out)."""

from __future__ import annotations

from oar.ops._infer import check_float
from oar.registry import Attr, GradSpec, OpDef


def _infer(ins, attrs):
    check_float(ins, "X")
    rank = len(ins["X"].shape)
    if not -rank <= attrs["axis"] < rank:
        raise ValueError(f"axis {attrs['axis']} is out of range for X of rank {rank}")
    return {"Out": ins["X"]}


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "softmax",
            ["X"],
            ["Out"],
            {
                "axis": Attr(int, -1),
                "use_cudnn": Attr(bool, False),
                "data_format": Attr(str, "AnyLayout"),
                "is_test": Attr(bool, False),
            },
            infer_shape=_infer,
            grad=GradSpec(("Out", "Out@GRAD"), ("X@GRAD",)),
            share_lod=(("X", "Out"),),
        )
    )
