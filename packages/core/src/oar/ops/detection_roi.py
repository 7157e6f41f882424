"""Region-of-interest pooling: roi_align, roi_pool, psroi_pool (position-sensitive) and
prroi_pool (precise: the exact integral of the bilinear interpolation over each bin), and
roi_perspective_transform (quadrilateral ROIs warped to rectangles).

ROIs are [R, 4] boxes (x1, y1, x2, y2) in input-image coordinates; their LoD (or the
optional ``RoisLod`` offsets / ``BatchRoINums`` counts input) says which image each belongs
to. Each op has a gradient for X; prroi_pool also one for the ROI coordinates.
"""

from __future__ import annotations

from oar.ops._infer import check_float
from oar.registry import Attr, GradSpec, OpDef, VarMeta


def _positive(v):
    return None if v > 0 else "must be positive"


def _rois(ins) -> int:
    x, rois = ins["X"], ins["ROIs"]
    check_float(ins, "X")
    if len(x.shape) != 4:
        raise ValueError(f"X must be a 4-D NCHW feature map, given {list(x.shape)}")
    if len(rois.shape) != 2 or (rois.shape[1] >= 0 and rois.shape[1] != 4):
        raise ValueError(f"ROIs must be [num_rois, 4] (x1, y1, x2, y2), given {list(rois.shape)}")
    return rois.shape[0]


def _infer(ins, attrs, channels=None, argmax=False):
    r = _rois(ins)
    x = ins["X"]
    c = x.shape[1] if channels is None else channels
    out = {"Out": VarMeta((r, c, attrs["pooled_height"], attrs["pooled_width"]), x.dtype)}
    if argmax:
        out["Argmax"] = VarMeta(out["Out"].shape, "int64")
    return out


def _infer_psroi(ins, attrs):
    c = ins["X"].shape[1]
    oc, ph, pw = attrs["output_channels"], attrs["pooled_height"], attrs["pooled_width"]
    if c >= 0 and c != oc * ph * pw:
        raise ValueError(
            f"X must have output_channels * pooled_height * pooled_width = {oc} * {ph} * {pw} = "
            f"{oc * ph * pw} channels, given {c}"
        )
    return _infer(ins, attrs, channels=oc)


def _infer_perspective(ins, attrs):
    x, rois = ins["X"], ins["ROIs"]
    check_float(ins, "X")
    if len(x.shape) != 4:
        raise ValueError(f"X must be a 4-D NCHW feature map, given {list(x.shape)}")
    if len(rois.shape) != 2 or (rois.shape[1] >= 0 and rois.shape[1] != 8):
        raise ValueError(
            f"ROIs must be [num_rois, 8] (4 corners, clockwise from top left), given {list(rois.shape)}"
        )
    r, th, tw = rois.shape[0], attrs["transformed_height"], attrs["transformed_width"]
    return {
        "Out": VarMeta((r, x.shape[1], th, tw), x.dtype),
        "Mask": VarMeta((r, 1, th, tw), "int32"),
        "TransformMatrix": VarMeta((r, 9), x.dtype),
    }


def _pooled() -> dict:
    return {
        "pooled_height": Attr(int, 1, _positive),
        "pooled_width": Attr(int, 1, _positive),
        "spatial_scale": Attr(float, 1.0, _positive),
    }


def register(registry) -> None:
    r = registry.register_op
    grad = GradSpec(("X", "ROIs", "RoisLod", "Out@GRAD"), ("X@GRAD",))
    r(OpDef("roi_align", ["X", "ROIs", "RoisLod?"], ["Out"],
            {**_pooled(), "sampling_ratio": Attr(int, -1)},
            infer_shape=_infer, grad=grad, doc="average of bilinear samples per bin (Mask R-CNN)"))  # fmt: skip
    r(OpDef("roi_pool", ["X", "ROIs", "RoisLod?"], ["Out", "Argmax"], _pooled(),
            infer_shape=lambda i, a: _infer(i, a, argmax=True),
            grad=GradSpec(("X", "ROIs", "RoisLod", "Argmax", "Out@GRAD"), ("X@GRAD",)),
            doc="max over each bin of the rounded ROI (Fast R-CNN)"))  # fmt: skip
    r(OpDef("psroi_pool", ["X", "ROIs"], ["Out"],
            {**_pooled(), "output_channels": Attr(int, check=_positive)},
            infer_shape=_infer_psroi, grad=GradSpec(("X", "ROIs", "Out@GRAD"), ("X@GRAD",)),
            doc="position-sensitive average pooling (R-FCN)"))  # fmt: skip
    r(OpDef("roi_perspective_transform", ["X", "ROIs"], ["Out", "Mask", "TransformMatrix"],
            {"transformed_height": Attr(int, 1, _positive), "transformed_width": Attr(int, 1, _positive),
             "spatial_scale": Attr(float, 1.0, _positive)},
            infer_shape=_infer_perspective, grad=GradSpec(("X", "ROIs", "Out@GRAD"), ("X@GRAD",)),
            doc="each quadrilateral ROI warped to a rectangle (perspective transform, bilinear)"))  # fmt: skip
    r(OpDef("prroi_pool", ["X", "ROIs", "BatchRoINums?"], ["Out"], _pooled(),
            infer_shape=_infer,
            grad=GradSpec(("X", "ROIs", "BatchRoINums", "Out@GRAD"), ("X@GRAD", "ROIs@GRAD")),
            doc="precise ROI pooling: integral of the bilinear interpolation per bin"))  # fmt: skip
