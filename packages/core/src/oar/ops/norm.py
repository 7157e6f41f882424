"""Normalisation ops: batch_norm, layer_norm, lrn."""

from __future__ import annotations

from oar.ops._infer import check_float, meta, numel, one_of
from oar.registry import Attr, GradSpec, OpDef

# --- batch_norm ---


def channel_axis(ndim: int, layout: str) -> int:
    return ndim - 1 if layout == "NHWC" and ndim > 2 else 1


def _infer_batch_norm(ins, attrs):
    x = ins["X"]
    check_float(ins, "X")
    if not 2 <= len(x.shape) <= 5:
        raise ValueError(f"batch_norm: X must be 2-D to 5-D, given shape {list(x.shape)}")
    c = x.shape[channel_axis(len(x.shape), attrs["data_layout"])]
    for slot in ("Scale", "Bias", "Mean", "Variance"):
        shape = list(ins[slot].shape)
        if c >= 0 and shape != [c]:
            raise ValueError(
                f"batch_norm: {slot} must have shape [{c}] (the channels of X {list(x.shape)} in "
                f"layout {attrs['data_layout']}), given {shape}"
            )
    stat = meta([c], ins["Mean"].dtype)
    return {"Y": x, "MeanOut": stat, "VarianceOut": stat, "SavedMean": stat, "SavedVariance": stat}


def _register_batch_norm(registry) -> None:
    registry.register_op(
        OpDef(
            "batch_norm",
            ["X", "Scale", "Bias", "Mean", "Variance", "MomentumTensor?"],
            ["Y", "MeanOut", "VarianceOut", "SavedMean", "SavedVariance"],
            {
                "momentum": Attr(float, 0.9),
                "epsilon": Attr(float, 1e-5),
                "is_test": Attr(bool, False),
                "data_layout": Attr(str, "NCHW", one_of("NCHW", "NHWC", "AnyLayout")),
                "use_global_stats": Attr(bool, False),
                "trainable_statistics": Attr(bool, False),
                "fuse_with_relu": Attr(bool, False),
            },
            infer_shape=_infer_batch_norm,
            kernel_dtype="X",
            grad=GradSpec(
                ("X", "Scale", "SavedMean", "SavedVariance", "Mean", "Variance", "Y@GRAD"),
                ("X@GRAD", "Scale@GRAD", "Bias@GRAD"),
            ),
            doc="batch normalisation; moving statistics updated in place",
        )
    )


# --- layer_norm ---


def _infer_layer_norm(ins, attrs):
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


def _register_layer_norm(registry) -> None:
    registry.register_op(
        OpDef(
            "layer_norm",
            ["X", "Scale?", "Bias?"],
            ["Y", "Mean", "Variance"],
            {"begin_norm_axis": Attr(int, 1), "epsilon": Attr(float, 1e-5)},
            infer_shape=_infer_layer_norm,
            kernel_dtype="X",
            grad=GradSpec(
                ("X", "Scale", "Mean", "Variance", "Y@GRAD"), ("X@GRAD", "Scale@GRAD", "Bias@GRAD")
            ),
            doc="layer normalisation",
        )
    )


# --- lrn ---


def _odd(n):
    return None if n > 0 and n % 2 == 1 else "must be a positive odd number (as in Fluid)"


def _infer_lrn(ins, attrs):
    x = ins["X"]
    check_float(ins, "X")
    if len(x.shape) != 4:
        raise ValueError(f"lrn: X must be 4-D, given shape {list(x.shape)}")
    return {"Out": x, "MidOut": x}


def _register_lrn(registry) -> None:
    registry.register_op(
        OpDef(
            "lrn",
            ["X"],
            ["Out", "MidOut"],
            {
                "n": Attr(int, 5, _odd),
                "k": Attr(float, 1.0),
                "alpha": Attr(float, 1e-4),
                "beta": Attr(float, 0.75),
                "is_test": Attr(bool, False),
                "data_format": Attr(str, "NCHW", one_of("NCHW", "NHWC", "AnyLayout")),
            },
            infer_shape=_infer_lrn,
            grad=GradSpec(("X", "Out", "MidOut", "Out@GRAD"), ("X@GRAD",)),
            doc="local response normalisation across channels",
        )
    )


def register(registry) -> None:
    _register_batch_norm(registry)
    _register_layer_norm(registry)
    _register_lrn(registry)
