"""Comparison ops (less_than, ..., not_equal -> bool) and logical ops on bool tensors.

Comparisons broadcast like elementwise ops (Fluid's ``axis`` rule); none has a gradient.
"""

from __future__ import annotations

from oar.ops._infer import broadcast_axis_shape, check_same_dtype, meta
from oar.registry import Attr, OpDef

COMPARE = ("less_than", "less_equal", "greater_than", "greater_equal", "equal", "not_equal")
LOGICAL_BINARY = ("logical_and", "logical_or", "logical_xor")


def _infer_compare(ins, attrs):
    x, y = ins["X"], ins["Y"]
    check_same_dtype(ins, "X", "Y")
    shape = broadcast_axis_shape(x.shape, y.shape, attrs["axis"])
    return {"Out": meta(shape, "bool", x.lod_level)}


def _check_bool(ins, *slots):
    for s in slots:
        if ins[s].dtype != "bool":
            raise TypeError(f"input '{s}' must be a bool tensor, given {ins[s].dtype}")


def _infer_logical(ins, attrs):
    _check_bool(ins, "X", "Y")
    return {
        "Out": meta(
            broadcast_axis_shape(ins["X"].shape, ins["Y"].shape, -1), "bool", ins["X"].lod_level
        )
    }


def _infer_not(ins, attrs):
    _check_bool(ins, "X")
    return {"Out": ins["X"]}


def register(registry) -> None:
    for name in COMPARE:
        registry.register_op(
            OpDef(
                name,
                ["X", "Y"],
                ["Out"],
                {"axis": Attr(int, -1), "force_cpu": Attr(bool, False)},
                infer_shape=_infer_compare,
                kernel_dtype="X",
            )
        )
    for name in LOGICAL_BINARY:
        registry.register_op(OpDef(name, ["X", "Y"], ["Out"], {}, infer_shape=_infer_logical))
    registry.register_op(OpDef("logical_not", ["X"], ["Out"], {}, infer_shape=_infer_not))
