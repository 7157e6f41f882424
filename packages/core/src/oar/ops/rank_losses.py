"""Pairwise ranking losses: margin_rank_loss and rank_loss (RankNet)."""

from __future__ import annotations

from oar.ops._infer import check_float, compatible
from oar.registry import Attr, GradSpec, OpDef


def _same(ins, slots):
    first = ins[slots[0]]
    for s in slots:
        check_float(ins, s)
        v = ins[s]
        if v.dtype != first.dtype:
            raise TypeError(f"{s} has dtype {v.dtype} but {slots[0]} has {first.dtype}")
        if len(v.shape) != len(first.shape) or not all(
            compatible(a, b) for a, b in zip(v.shape, first.shape)
        ):
            raise ValueError(
                f"{s} shape {list(v.shape)} differs from {slots[0]} shape {list(first.shape)}"
            )
    if len(first.shape) != 2 or (first.shape[1] != 1 and first.shape[1] >= 0):
        raise ValueError(f"inputs must have shape [N, 1], given {list(first.shape)}")
    return first


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "margin_rank_loss",
            ["X1", "X2", "Label"],
            ["Activated", "Out"],
            {"margin": Attr(float, 0.0)},
            infer_shape=lambda ins, a: dict.fromkeys(
                ("Out", "Activated"), _same(ins, ("X1", "X2", "Label"))
            ),
            grad=GradSpec(("Label", "Activated", "Out@GRAD"), ("X1@GRAD", "X2@GRAD")),
        )
    )
    registry.register_op(
        OpDef(
            "rank_loss",
            ["Label", "Left", "Right"],
            ["Out"],
            {},
            infer_shape=lambda ins, a: {"Out": _same(ins, ("Left", "Right", "Label"))},
            grad=GradSpec(("Left", "Label", "Right", "Out@GRAD"), ("Left@GRAD", "Right@GRAD")),
        )
    )
