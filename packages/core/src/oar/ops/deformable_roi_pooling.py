"""deformable_psroi_pooling (fluid.layers.deformable_roi_pooling): ROI pooling whose bins move
by learned offsets (``Trans``, scaled by ``trans_std`` and the ROI size), averaging
``sample_per_part``^2 bilinear samples per bin; optionally position-sensitive (R-FCN).
Gradients for Input and Trans."""

from __future__ import annotations

from oar.ops._infer import check_float
from oar.registry import Attr, GradSpec, OpDef, VarMeta


def _infer(ins, attrs):
    x, rois, trans = ins["Input"], ins["ROIs"], ins["Trans"]
    check_float(ins, "Input")
    if len(x.shape) != 4:
        raise ValueError(f"Input must be [N, C, H, W], given {list(x.shape)}")
    if len(rois.shape) != 2 or (rois.shape[1] >= 0 and rois.shape[1] != 4):
        raise ValueError(f"ROIs must be [num_rois, 4], given {list(rois.shape)}")
    if len(trans.shape) != 4:
        raise ValueError(
            f"Trans must be [num_rois, 2 * classes, part_h, part_w], given {list(trans.shape)}"
        )
    ph, pw = attrs["pooled_height"], attrs["pooled_width"]
    part = attrs["part_size"]
    if (
        not attrs["no_trans"]
        and trans.shape[2] >= 0
        and (part[0] > trans.shape[2] or part[1] > trans.shape[3])
    ):
        raise ValueError(f"part_size {part} must fit Trans' parts {list(trans.shape[2:])}")
    c = attrs["output_dim"]
    if x.shape[1] >= 0 and attrs["position_sensitive"]:
        gh, gw = attrs["group_size"]
        if x.shape[1] != c * gh * gw:
            raise ValueError(
                f"position-sensitive pooling needs output_dim * group_h * group_w = {c * gh * gw} channels, given {x.shape[1]}"
            )
    out = VarMeta((rois.shape[0], c, ph, pw), x.dtype)
    return {"Output": out, "TopCount": out}


def _positive(v):
    return None if v > 0 else "must be positive"


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "deformable_psroi_pooling",
            ["Input", "ROIs", "Trans"],
            ["Output", "TopCount"],
            {
                "no_trans": Attr(bool, False),
                "spatial_scale": Attr(float, 1.0, _positive),
                "output_dim": Attr(int, check=_positive),
                "group_size": Attr(list, [1, 1]),
                "pooled_height": Attr(int, 1, _positive),
                "pooled_width": Attr(int, 1, _positive),
                "part_size": Attr(list, [1, 1]),
                "sample_per_part": Attr(int, 1, _positive),
                "trans_std": Attr(float, 0.1),
                "position_sensitive": Attr(bool, False),
            },
            infer_shape=_infer,
            grad=GradSpec(
                ("Input", "ROIs", "Trans", "TopCount", "Output@GRAD"), ("Input@GRAD", "Trans@GRAD")
            ),
            doc="deformable (position-sensitive) ROI pooling",
        )
    )
