"""Binary elementwise ops with Fluid's ``axis`` broadcasting: add, sub, mul, div, ...

``Y``'s shape must match a run of ``X``'s dims starting at ``axis``
(``axis=-1``: aligned to the trailing dims), or broadcast numpy-style.
"""

from __future__ import annotations

from oar.ops._infer import broadcast_axis_shape, check_same_dtype, meta
from oar.registry import Attr, GradSpec, OpDef

DIFFERENTIABLE = (
    "elementwise_add",
    "elementwise_sub",
    "elementwise_mul",
    "elementwise_div",
    "elementwise_max",
    "elementwise_min",
    "elementwise_pow",
)
NON_DIFFERENTIABLE = ("elementwise_mod", "elementwise_floordiv")


def infer_elementwise(ins, attrs):
    x, y = ins["X"], ins["Y"]
    dtype = check_same_dtype(ins, "X", "Y")
    shape = broadcast_axis_shape(x.shape, y.shape, attrs["axis"])
    return {"Out": meta(shape, dtype, max(x.lod_level, y.lod_level))}


def _attrs():
    return {"axis": Attr(int, -1)}


def register(registry) -> None:
    for name in (*DIFFERENTIABLE, *NON_DIFFERENTIABLE):
        grad = None
        if name in DIFFERENTIABLE:
            reads = ("X", "Y", "Out@GRAD")
            if name == "elementwise_pow":
                reads = ("X", "Y", "Out", "Out@GRAD")
            grad = GradSpec(reads, ("X@GRAD", "Y@GRAD"))
        registry.register_op(
            OpDef(
                name,
                ["X", "Y"],
                ["Out"],
                _attrs(),
                infer_shape=infer_elementwise,
                grad=grad,
                share_lod=(("X", "Out"),),
            )
        )
