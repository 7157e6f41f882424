"""cast: change a tensor's dtype (its gradient casts back)."""

from __future__ import annotations

from oar.framework.dtypes import convert_dtype
from oar.ops._infer import meta
from oar.registry import Attr, GradOpDesc, OpDef


def _infer(ins, attrs):
    x = ins["X"]
    if convert_dtype(attrs["in_dtype"]) != x.dtype:
        raise TypeError(f"in_dtype {attrs['in_dtype']} does not match X's dtype {x.dtype}")
    return {"Out": meta(x.shape, convert_dtype(attrs["out_dtype"]), x.lod_level)}


def _grad(g):
    return [
        GradOpDesc(
            "cast",
            {"X": g.output_grad("Out")},
            {"Out": g.input_grad("X")},
            {"in_dtype": g.attrs["out_dtype"], "out_dtype": g.attrs["in_dtype"]},
        )
    ]


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "cast",
            ["X"],
            ["Out"],
            {"in_dtype": Attr(str), "out_dtype": Attr(str)},
            infer_shape=_infer,
            grad=_grad,
            share_lod=(("X", "Out"),),
        )
    )
