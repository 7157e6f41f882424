"""affine_channel: a per-channel scale and shift (a frozen batch norm), with gradients for
X, Scale and Bias."""

from __future__ import annotations

from oar.ops._infer import check_float
from oar.registry import Attr, GradSpec, OpDef


def _infer(ins, attrs):
    x = ins["X"]
    check_float(ins, "X")
    if len(x.shape) < 2:
        raise ValueError(f"X must have a channel axis (at least 2-D), given {list(x.shape)}")
    c = x.shape[1] if attrs["data_layout"] == "NCHW" else x.shape[-1]
    for slot in ("Scale", "Bias"):
        s = ins[slot]
        if len(s.shape) != 1 or (c >= 0 and s.shape[0] >= 0 and s.shape[0] != c):
            raise ValueError(
                f"{slot} must be [C] with C = {c} channels of X {list(x.shape)}, given {list(s.shape)}"
            )
    return {"Out": x}


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "affine_channel",
            ["X", "Scale", "Bias"],
            ["Out"],
            {
                "data_layout": Attr(
                    str,
                    "NCHW",
                    lambda v: (
                        None if v in ("NCHW", "NHWC", "AnyLayout") else "must be 'NCHW' or 'NHWC'"
                    ),
                )
            },
            infer_shape=_infer,
            grad=GradSpec(("X", "Scale", "Out@GRAD"), ("X@GRAD", "Scale@GRAD", "Bias@GRAD")),
            doc="Out = X * Scale + Bias per channel",
        )
    )
