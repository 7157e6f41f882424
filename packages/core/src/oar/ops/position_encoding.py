"""add_position_encoding: alpha * X + beta * the sinusoid position encoding of the
Transformer (sines in the first half of the channels, cosines in the second)."""

from __future__ import annotations

from oar.ops._infer import check_float
from oar.registry import Attr, GradSpec, OpDef


def _infer(ins, attrs):
    x = ins["X"]
    check_float(ins, "X")
    if len(x.shape) != 3 or (x.shape[2] >= 0 and x.shape[2] % 2):
        raise ValueError(f"X must be [batch, seq_len, even channels], given {list(x.shape)}")
    return {"Out": x}


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "add_position_encoding",
            ["X"],
            ["Out"],
            {"alpha": Attr(float, 1.0), "beta": Attr(float, 1.0)},
            infer_shape=_infer,
            grad=GradSpec(("Out@GRAD",), ("X@GRAD",)),
            share_lod=(("X", "Out"),),
            doc="alpha * X + beta * sinusoid position encoding",
        )
    )
