"""prelu: x if x > 0 else alpha * x, with a learnable alpha per tensor, channel or element."""

from __future__ import annotations

from oar.ops._infer import check_float, one_of
from oar.registry import Attr, GradSpec, OpDef


def alpha_shape(x_shape, mode: str) -> list:
    """The Alpha parameter's shape for ``mode`` (Fluid's layout)."""
    if mode == "all":
        return [1]
    if mode == "channel":
        return [1, x_shape[1]] + [1] * (len(x_shape) - 2)
    return [1] + list(x_shape[1:])


def _infer(ins, attrs):
    check_float(ins, "X")
    x, a = ins["X"], ins["Alpha"]
    mode = attrs["mode"]
    if mode != "all" and len(x.shape) < 2:
        raise ValueError(f"mode '{mode}' needs X of rank >= 2, given shape {list(x.shape)}")
    want = alpha_shape(x.shape, mode)
    size = 1
    for d in want:
        size *= d
    got = 1
    for d in a.shape:
        got *= d
    if size >= 0 and got >= 0 and size != got:
        raise ValueError(
            f"Alpha has {got} elements but mode '{mode}' needs shape {want} for X {list(x.shape)}"
        )
    return {"Out": x}


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "prelu",
            ["X", "Alpha"],
            ["Out"],
            {"mode": Attr(str, "all", one_of("all", "channel", "element"))},
            infer_shape=_infer,
            grad=GradSpec(("X", "Alpha", "Out@GRAD"), ("X@GRAD", "Alpha@GRAD")),
            share_lod=(("X", "Out"),),
        )
    )
