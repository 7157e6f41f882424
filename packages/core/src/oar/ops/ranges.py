"""Ops that describe or generate index ranges: shape, range, linspace, increment."""

from __future__ import annotations

from oar.ops._infer import check_same_dtype, meta, numel
from oar.registry import Attr, OpDef


def _one(ins, *slots) -> None:
    for s in slots:
        if numel(ins[s].shape) not in (1, -1):
            raise ValueError(
                f"{s} must hold one value (shape [1]), given shape {list(ins[s].shape)}"
            )


def _infer_range(ins, attrs):
    _one(ins, "Start", "End", "Step")
    dtype = check_same_dtype(ins, "Start", "End", "Step")
    return {"Out": meta([-1], dtype)}


def _infer_linspace(ins, attrs):
    _one(ins, "Start", "Stop", "Num")
    dtype = check_same_dtype(ins, "Start", "Stop")
    if ins["Num"].dtype not in ("int32", "int64"):
        raise TypeError(f"Num must be int32, given {ins['Num'].dtype}")
    return {"Out": meta([-1], dtype)}


def _infer_increment(ins, attrs):
    x = ins["X"]
    if numel(x.shape) not in (1, -1):
        raise ValueError(f"X must hold exactly one element, given shape {list(x.shape)}")
    return {"Out": x}


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "shape",
            ["Input"],
            ["Out"],
            {},
            infer_shape=lambda ins, a: {"Out": meta([len(ins["Input"].shape)], "int32")},
        )
    )
    registry.register_op(
        OpDef(
            "range",
            ["Start", "End", "Step"],
            ["Out"],
            {},
            infer_shape=_infer_range,
            kernel_dtype="Start",
        )
    )
    registry.register_op(
        OpDef(
            "linspace",
            ["Start", "Stop", "Num"],
            ["Out"],
            {},
            infer_shape=_infer_linspace,
            kernel_dtype="Start",
        )
    )
    registry.register_op(
        OpDef("increment", ["X"], ["Out"], {"step": Attr(float, 1.0)}, infer_shape=_infer_increment)
    )
