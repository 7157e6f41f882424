"""``batch_norm``: normalise per channel with batch statistics (training) or the moving ones.

Fluid's slots: X, Scale, Bias, Mean, Variance -> Y, MeanOut, VarianceOut,
SavedMean, SavedVariance. MeanOut/VarianceOut name the same persistable
variables as Mean/Variance and the kernel updates them in place
(``moving = moving * momentum + batch * (1 - momentum)``, biased batch
variance); SavedVariance holds ``1 / sqrt(var + epsilon)`` as in Fluid.
"""

from __future__ import annotations

from oar.ops._infer import check_float, meta, one_of
from oar.registry import Attr, GradSpec, OpDef


def channel_axis(ndim: int, layout: str) -> int:
    return ndim - 1 if layout == "NHWC" and ndim > 2 else 1


def _infer(ins, attrs):
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


def register(registry) -> None:
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
            infer_shape=_infer,
            kernel_dtype="X",
            grad=GradSpec(
                ("X", "Scale", "SavedMean", "SavedVariance", "Mean", "Variance", "Y@GRAD"),
                ("X@GRAD", "Scale@GRAD", "Bias@GRAD"),
            ),
            doc="batch normalisation; moving statistics updated in place",
        )
    )
