"""Ops that gradient clipping needs: clip, clip_by_norm, squared_l2_norm (Fluid names and attrs)."""

from __future__ import annotations

from oar.ops._infer import meta
from oar.registry import Attr, GradSpec, OpDef


def _infer_clip(ins, attrs):
    if attrs["min"] > attrs["max"]:
        raise ValueError(f"attribute min ({attrs['min']}) must not exceed max ({attrs['max']})")
    return {"Out": ins["X"]}


def _infer_clip_by_norm(ins, attrs):
    if attrs["max_norm"] <= 0:
        raise ValueError(f"attribute max_norm must be > 0, given {attrs['max_norm']}")
    return {"Out": ins["X"]}


def register(registry) -> None:
    registry.register_op(OpDef(
        "clip", ["X", "Min?", "Max?"], ["Out"], {"min": Attr(float), "max": Attr(float)},
        infer_shape=_infer_clip, grad=GradSpec(("X", "Min", "Max", "Out@GRAD"), ("X@GRAD",)),
        share_lod=(("X", "Out"),), doc="Out = min(max(X, min), max); the gradient passes where min < X < max",
    ))
    registry.register_op(OpDef(
        "clip_by_norm", ["X"], ["Out"], {"max_norm": Attr(float)}, infer_shape=_infer_clip_by_norm,
        doc="Out = X * max_norm / max(|X|_2, max_norm) (no gradient, as in Fluid)",
    ))
    registry.register_op(OpDef(
        "squared_l2_norm", ["X"], ["Out"], {}, infer_shape=lambda ins, a: {"Out": meta([1], ins["X"].dtype)},
        grad=GradSpec(("X", "Out@GRAD"), ("X@GRAD",)), doc="Out = sum(X*X)",
    ))
