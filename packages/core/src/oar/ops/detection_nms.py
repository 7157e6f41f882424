"""Non-maximum suppression for detection: multiclass_nms (and multiclass_nms2 with the kept
boxes' indices), matrix_nms (SOLOv2's parallel soft suppression) and locality_aware_nms
(EAST: consecutive overlapping boxes merged first; quadrilateral boxes).

Outputs are LoD tensors with one sequence of kept detections per image, rows
``[label, score, x1, y1, x2, y2]`` (or the polygon's corners). No gradients.
"""

from __future__ import annotations

from oar.ops._infer import check_float
from oar.registry import Attr, OpDef, VarMeta

BOX_SIZES = (4, 8, 16, 24, 32)


def _int_ge(lo: int):
    return lambda v: None if v >= lo else f"must be >= {lo}"


def _infer(ins, attrs, polygons: bool = False):
    b, s = ins["BBoxes"], ins["Scores"]
    check_float(ins, "BBoxes")
    check_float(ins, "Scores")
    sizes = BOX_SIZES if polygons else (4,)
    if len(s.shape) == 3:
        if len(b.shape) != 3:
            raise ValueError(
                f"BBoxes must be [N, M, box size] with Scores [N, C, M], given {list(b.shape)}"
            )
        for k, (db, ds) in enumerate(((b.shape[0], s.shape[0]), (b.shape[1], s.shape[2]))):
            if db >= 0 and ds >= 0 and db != ds:
                what = "batch size" if k == 0 else "number of boxes"
                raise ValueError(
                    f"BBoxes {list(b.shape)} and Scores {list(s.shape)} disagree on the {what}: "
                    f"expected {ds} (from Scores [N, C, M]), given {db} in BBoxes [N, M, 4]"
                )
    elif len(s.shape) == 2:
        if len(b.shape) != 3:
            raise ValueError(
                f"with 2-D Scores [M, C], BBoxes must be [M, C, 4], given {list(b.shape)}"
            )
    else:
        raise ValueError(f"Scores must be [N, C, M] (or [M, C] with LoD), given {list(s.shape)}")
    if b.shape[-1] >= 0 and b.shape[-1] not in sizes:
        raise ValueError(
            f"BBoxes' last dim must be one of {list(sizes)} (box corners), given {b.shape[-1]}"
        )
    width = 2 + (b.shape[-1] if b.shape[-1] >= 0 else 4)
    out = {"Out": VarMeta((-1, width), b.dtype, 1)}
    out["Index"] = VarMeta((-1, 1), "int32", 1)
    return out


def _common() -> dict:
    return {
        "background_label": Attr(int, 0),
        "score_threshold": Attr(float),
        "nms_top_k": Attr(int, check=_int_ge(-1)),
        "keep_top_k": Attr(int, check=_int_ge(-1)),
        "normalized": Attr(bool, True),
    }


def _nms_attrs() -> dict:
    return {
        **_common(),
        "nms_threshold": Attr(float, 0.3, lambda v: None if 0 <= v <= 1 else "must be in [0, 1]"),
        "nms_eta": Attr(float, 1.0, lambda v: None if 0 < v <= 1 else "must be in (0, 1]"),
    }


def register(registry) -> None:
    r = registry.register_op
    r(OpDef("multiclass_nms", ["BBoxes", "Scores"], ["Out"], _nms_attrs(),
            infer_shape=lambda i, a: {"Out": _infer(i, a)["Out"]},
            doc="per-class greedy NMS, then the best keep_top_k per image"))  # fmt: skip
    r(OpDef("multiclass_nms2", ["BBoxes", "Scores"], ["Out", "Index"], _nms_attrs(),
            infer_shape=_infer, doc="multiclass_nms with the kept boxes' indices"))  # fmt: skip
    r(OpDef("locality_aware_nms", ["BBoxes", "Scores"], ["Out"], _nms_attrs(),
            infer_shape=lambda i, a: {"Out": _infer(i, a, polygons=True)["Out"]},
            doc="EAST's NMS: consecutive overlapping boxes merged (score-weighted), then NMS"))  # fmt: skip
    r(OpDef("matrix_nms", ["BBoxes", "Scores"], ["Out", "Index"],
            {**_common(), "post_threshold": Attr(float, 0.0),
             "use_gaussian": Attr(bool, False), "gaussian_sigma": Attr(float, 2.0)},
            infer_shape=_infer, doc="Matrix NMS: scores decayed by their overlaps, all at once"))  # fmt: skip
