"""Value and norm clipping ops: clip, clip_by_norm (Fluid names and attrs).

The nn-ops branch defines the same two ops in a module of this name; when
both land, keep that version (same slots, attrs and dense kernels).
"""

from __future__ import annotations

from oar.registry import Attr, GradSpec, OpDef


def _infer_clip(ins, attrs):
    if ins.get("Min") is None and ins.get("Max") is None and attrs["min"] > attrs["max"]:
        raise ValueError(f"min {attrs['min']} must not exceed max {attrs['max']}")
    return {"Out": ins["X"]}


def _infer_clip_by_norm(ins, attrs):
    if attrs["max_norm"] <= 0:
        raise ValueError(f"max_norm must be > 0, given {attrs['max_norm']}")
    return {"Out": ins["X"]}


def register(registry) -> None:
    registry.register_op(OpDef(
        "clip", ["X", "Min?", "Max?"], ["Out"], {"min": Attr(float, -3.4e38), "max": Attr(float, 3.4e38)},
        infer_shape=_infer_clip, grad=GradSpec(("X", "Min", "Max", "Out@GRAD"), ("X@GRAD",)),
        share_lod=(("X", "Out"),),
    ))
    registry.register_op(OpDef(
        "clip_by_norm", ["X"], ["Out"], {"max_norm": Attr(float)}, infer_shape=_infer_clip_by_norm,
    ))
