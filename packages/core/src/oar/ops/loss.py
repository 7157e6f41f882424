"""Losses on probabilities: cross_entropy (hard or soft labels)."""

from __future__ import annotations

from oar.ops._infer import check_float, compatible, meta
from oar.registry import Attr, GradSpec, OpDef


def _infer_cross_entropy(ins, attrs):
    x, label = ins["X"], ins["Label"]
    check_float(ins, "X")
    if len(x.shape) != len(label.shape):
        raise ValueError(
            f"Label must have the rank of X ({len(x.shape)}); given Label shape {list(label.shape)} "
            f"for X shape {list(x.shape)}"
        )
    for a, b in zip(x.shape[:-1], label.shape[:-1]):
        if not compatible(a, b):
            raise ValueError(
                f"X {list(x.shape)} and Label {list(label.shape)} differ in the leading dims"
            )
    if attrs["soft_label"]:
        if label.dtype != x.dtype:
            raise TypeError(f"soft Label must have X's dtype {x.dtype}, given {label.dtype}")
        if not compatible(label.shape[-1], x.shape[-1]):
            raise ValueError(
                f"soft Label's last dim {label.shape[-1]} must equal X's {x.shape[-1]}"
            )
    else:
        # a float hard Label builds (as in Fluid, and the seed's 单机训练 sample builds one);
        # the kernel refuses it when the program runs
        if label.shape[-1] != 1 and label.shape[-1] >= 0:
            raise ValueError(f"hard Label's last dim must be 1, given shape {list(label.shape)}")
    return {"Y": meta(tuple(x.shape[:-1]) + (1,), x.dtype, x.lod_level)}


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "cross_entropy",
            ["X", "Label"],
            ["Y"],
            {"soft_label": Attr(bool, False), "ignore_index": Attr(int, -100)},
            infer_shape=_infer_cross_entropy,
            grad=GradSpec(("X", "Label", "Y@GRAD"), ("X@GRAD",)),
            share_lod=(("X", "Y"),),
        )
    )
