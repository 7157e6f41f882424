"""Repeat rows or sequences along another tensor's LoD: sequence_expand, sequence_expand_as."""

from __future__ import annotations

from oar.ops._infer import meta
from oar.registry import Attr, GradSpec, OpDef


def _infer_expand(ins, attrs):
    x = ins["X"]
    return {"Out": meta((-1,) + tuple(x.shape[1:]), x.dtype, x.lod_level)}


def _infer_expand_as(ins, attrs):
    x, y = ins["X"], ins["Y"]
    return {"Out": meta((-1,) + tuple(x.shape[1:]), x.dtype, max(y.lod_level, 1))}


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "sequence_expand",
            ["X", "Y"],
            ["Out"],
            {"ref_level": Attr(int, -1)},
            infer_shape=_infer_expand,
            kernel_dtype="X",
            grad=GradSpec(("Out@GRAD", "X", "Y"), ("X@GRAD",)),
            doc="repeat each sequence (or row) of X as often as Y's ref_level sequences say",
        )
    )
    registry.register_op(
        OpDef(
            "sequence_expand_as",
            ["X", "Y"],
            ["Out"],
            infer_shape=_infer_expand_as,
            kernel_dtype="X",
            grad=GradSpec(("Out@GRAD", "X", "Y"), ("X@GRAD",)),
            doc="repeat row i of X as many times as Y's sequence i is long",
        )
    )
