"""Per-sample normalisation ops: group_norm and instance_norm."""

from __future__ import annotations

from oar.ops._infer import check_float, meta, one_of
from oar.registry import Attr, GradSpec, OpDef


def _check_affine(ins, c: int, layer: str) -> None:
    for slot in ("Scale", "Bias"):
        v = ins.get(slot)
        if v is not None and c >= 0 and list(v.shape) != [c]:
            raise ValueError(
                f"{layer}: {slot} must have shape [{c}] (the channels), given {list(v.shape)}"
            )


def _infer_group_norm(ins, attrs):
    x = ins["X"]
    check_float(ins, "X")
    if len(x.shape) < 2:
        raise ValueError(f"group_norm: X must have at least 2 dims, given {list(x.shape)}")
    c = x.shape[-1 if attrs["data_layout"] == "NHWC" else 1]
    g = attrs["groups"]
    if g < 1 or (c >= 0 and g > c):
        raise ValueError(
            f"group_norm: groups={g} must be between 1 and the {c} channels of X {list(x.shape)}"
        )
    _check_affine(ins, c, "group_norm")
    stat = meta([x.shape[0], g], x.dtype)
    return {"Y": x, "Mean": stat, "Variance": stat}


def _infer_instance_norm(ins, attrs):
    x = ins["X"]
    check_float(ins, "X")
    if not 2 <= len(x.shape) <= 5:
        raise ValueError(f"instance_norm: X must be 2-D to 5-D, given {list(x.shape)}")
    n, c = x.shape[0], x.shape[1]
    _check_affine(ins, c, "instance_norm")
    stat = meta([n * c if n >= 0 and c >= 0 else -1], x.dtype)
    return {"Y": x, "SavedMean": stat, "SavedVariance": stat}


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "group_norm",
            ["X", "Scale?", "Bias?"],
            ["Y", "Mean", "Variance"],
            {
                "epsilon": Attr(float, 1e-5),
                "groups": Attr(int, 1),
                "data_layout": Attr(str, "NCHW", one_of("NCHW", "NHWC")),
            },
            infer_shape=_infer_group_norm,
            kernel_dtype="X",
            grad=GradSpec(
                ("X", "Scale", "Bias", "Mean", "Variance", "Y@GRAD"),
                ("X@GRAD", "Scale@GRAD", "Bias@GRAD"),
            ),
            doc="normalisation over groups of channels per sample",
        )
    )
    registry.register_op(
        OpDef(
            "instance_norm",
            ["X", "Scale?", "Bias?"],
            ["Y", "SavedMean", "SavedVariance"],
            {"epsilon": Attr(float, 1e-5)},
            infer_shape=_infer_instance_norm,
            kernel_dtype="X",
            grad=GradSpec(
                ("X", "Scale", "SavedMean", "SavedVariance", "Y@GRAD"),
                ("X@GRAD", "Scale@GRAD", "Bias@GRAD"),
            ),
            doc="normalisation over each channel of each sample; SavedVariance holds 1/std",
        )
    )
