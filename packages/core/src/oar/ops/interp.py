"""Image resizing: ``bilinear_interp`` and ``nearest_interp`` (behind image_resize / resize_*).

Fluid's slots: X, OutSize?, SizeTensor*?, Scale? -> Out; attrs ``out_h``,
``out_w``, ``scale``, ``interp_method``, ``align_corners`` (default True) and
``align_mode`` (1: source index ``ratio * i``; 0: half-pixel centres, used
only when align_corners is False). The size comes from OutSize, SizeTensor,
Scale, the ``scale`` attr, or ``out_h``/``out_w``, in that order.
"""

from __future__ import annotations

from oar.ops._infer import check_float, meta, one_of
from oar.registry import Attr, GradSpec, OpDef


def _infer(op_type):
    def infer(ins, attrs):
        x = ins["X"]
        check_float(ins, "X")
        if len(x.shape) != 4:
            raise ValueError(f"{op_type}: X must be 4-D, given shape {list(x.shape)}")
        nhwc = attrs["data_layout"] == "NHWC"
        n, c, h, w = (x.shape[0], x.shape[3], x.shape[1], x.shape[2]) if nhwc else x.shape
        if ins.get("OutSize") is not None or ins.get("SizeTensor") or ins.get("Scale") is not None:
            oh = ow = -1
        elif attrs["scale"] > 0:
            oh = int(h * attrs["scale"]) if h >= 0 else -1
            ow = int(w * attrs["scale"]) if w >= 0 else -1
        else:
            oh, ow = attrs["out_h"], attrs["out_w"]
            if oh <= 0 or ow <= 0:
                raise ValueError(
                    f"{op_type}: out_h and out_w must be positive (or give scale / OutSize), "
                    f"given out_h={oh}, out_w={ow}"
                )
        out = (n, oh, ow, c) if nhwc else (n, c, oh, ow)
        return {"Out": meta(out, x.dtype)}

    return infer


def register(registry) -> None:
    for name, method in (("bilinear_interp", "bilinear"), ("nearest_interp", "nearest")):
        registry.register_op(
            OpDef(
                name,
                ["X", "OutSize?", "SizeTensor*?", "Scale?"],
                ["Out"],
                {
                    "out_d": Attr(int, -1),
                    "out_h": Attr(int, -1),
                    "out_w": Attr(int, -1),
                    "scale": Attr(float, 0.0),
                    "interp_method": Attr(str, method, one_of(method)),
                    "align_corners": Attr(bool, True),
                    "align_mode": Attr(int, 1, one_of(0, 1)),
                    "data_layout": Attr(str, "NCHW", one_of("NCHW", "NHWC", "AnyLayout")),
                },
                infer_shape=_infer(name),
                kernel_dtype="X",
                grad=GradSpec(("X", "OutSize", "SizeTensor", "Scale", "Out@GRAD"), ("X@GRAD",)),
                doc=f"{method} image resize",
            )
        )
