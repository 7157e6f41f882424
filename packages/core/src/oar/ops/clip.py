"""Value and norm clipping: clip, clip_by_norm, and norm (the op behind l2_normalize)."""

from __future__ import annotations

from oar.ops._infer import check_float, meta
from oar.registry import Attr, GradSpec, OpDef


def _infer_clip(ins, attrs):
    check_float(ins, "X")
    if ins.get("Min") is None and ins.get("Max") is None and attrs["min"] > attrs["max"]:
        raise ValueError(f"min {attrs['min']} must not exceed max {attrs['max']}")
    return {"Out": ins["X"]}


def _infer_clip_by_norm(ins, attrs):
    check_float(ins, "X")
    if attrs["max_norm"] <= 0:
        raise ValueError(f"max_norm must be > 0, given {attrs['max_norm']}")
    return {"Out": ins["X"]}


def _infer_norm(ins, attrs):
    check_float(ins, "X")
    x = ins["X"]
    rank = len(x.shape)
    if not -rank <= attrs["axis"] < rank:
        raise ValueError(f"axis {attrs['axis']} is out of range for X of rank {rank}")
    axis = attrs["axis"] % rank
    return {"Out": x, "Norm": meta([1 if i == axis else d for i, d in enumerate(x.shape)], x.dtype)}


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "clip",
            ["X", "Min?", "Max?"],
            ["Out"],
            {"min": Attr(float, -3.4e38), "max": Attr(float, 3.4e38)},
            infer_shape=_infer_clip,
            grad=GradSpec(("X", "Min", "Max", "Out@GRAD"), ("X@GRAD",)),
            share_lod=(("X", "Out"),),
        )
    )
    registry.register_op(
        OpDef(
            "clip_by_norm",
            ["X"],
            ["Out"],
            {"max_norm": Attr(float)},
            infer_shape=_infer_clip_by_norm,
            grad=GradSpec(("X", "Out@GRAD"), ("X@GRAD",)),
        )
    )
    registry.register_op(
        OpDef(
            "norm",
            ["X"],
            ["Out", "Norm"],
            {"axis": Attr(int, 1), "epsilon": Attr(float, 1e-10), "is_test": Attr(bool, False)},
            infer_shape=_infer_norm,
            grad=GradSpec(("X", "Norm", "Out@GRAD"), ("X@GRAD",)),
        )
    )
