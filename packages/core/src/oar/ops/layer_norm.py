"""``layer_norm``: normalise over the dims from ``begin_norm_axis`` on, per leading index.

Fluid's slots: X, Scale?, Bias? -> Y, Mean, Variance; Mean and Variance have
one value per row of X flattened at ``begin_norm_axis``; Scale and Bias have
the flattened trailing size.
"""

from __future__ import annotations

from oar.ops._infer import check_float, meta, numel
from oar.registry import Attr, GradSpec, OpDef


def _infer(ins, attrs):
    x = ins["X"]
    check_float(ins, "X")
    axis = attrs["begin_norm_axis"]
    if not 0 < axis < len(x.shape):
        raise ValueError(
            f"layer_norm: begin_norm_axis={axis} must be in [1, {len(x.shape) - 1}] for X of shape "
            f"{list(x.shape)}"
        )
    left, right = numel(x.shape[:axis]), numel(x.shape[axis:])
    for slot in ("Scale", "Bias"):
        v = ins.get(slot)
        if v is not None and right >= 0 and numel(v.shape) != right:
            raise ValueError(
                f"layer_norm: {slot} must have {right} elements (X {list(x.shape)} from axis {axis}), "
                f"given shape {list(v.shape)}"
            )
    return {"Y": x, "Mean": meta([left], x.dtype), "Variance": meta([left], x.dtype)}


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "layer_norm",
            ["X", "Scale?", "Bias?"],
            ["Y", "Mean", "Variance"],
            {"begin_norm_axis": Attr(int, 1), "epsilon": Attr(float, 1e-5)},
            infer_shape=_infer,
            kernel_dtype="X",
            grad=GradSpec(
                ("X", "Scale", "Mean", "Variance", "Y@GRAD"), ("X@GRAD", "Scale@GRAD", "Bias@GRAD")
            ),
            doc="layer normalisation",
        )
    )
