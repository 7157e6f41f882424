"""maxout: the max over ``groups`` consecutive channels (channels shrink by ``groups``)."""

from __future__ import annotations

from oar.ops._infer import check_float, int_check, meta
from oar.registry import Attr, GradSpec, OpDef


def _infer(ins, attrs):
    check_float(ins, "X")
    x = ins["X"]
    axis, groups = attrs["axis"], attrs["groups"]
    if len(x.shape) != 4:
        raise ValueError(f"X must be 4-D (NCHW or NHWC), given shape {list(x.shape)}")
    if axis not in (1, -1, 3):
        raise ValueError(f"axis must be 1 (NCHW) or -1/3 (NHWC), given {axis}")
    c = x.shape[axis]
    if c >= 0 and c % groups:
        raise ValueError(
            f"the channel dim ({c}) of X {list(x.shape)} is not divisible by groups={groups}"
        )
    shape = list(x.shape)
    shape[axis] = c // groups if c >= 0 else -1
    return {"Out": meta(shape, x.dtype)}


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "maxout",
            ["X"],
            ["Out"],
            {"groups": Attr(int, 1, int_check(1)), "axis": Attr(int, 1)},
            infer_shape=_infer,
            grad=GradSpec(("X", "Out", "Out@GRAD"), ("X@GRAD",)),
        )
    )
