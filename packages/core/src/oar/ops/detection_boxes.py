"""Box geometry for detection: IoU, box encoding/decoding, prior and anchor generation,
clipping, YOLO decoding and EAST's polygon transform.

None of these ops has a gradient in Fluid 1.8.5 (they act on coordinates, priors and
anchors, not on learned tensors), so none is registered here either.
"""

from __future__ import annotations

from oar.ops._infer import check_float
from oar.registry import Attr, OpDef, VarMeta

CODE_TYPES = ("encode_center_size", "decode_center_size")


def _positive_list(name: str, allow_empty: bool = False):
    def check(v):
        if not allow_empty and not v:
            return f"must not be empty ({name})"
        if any(not isinstance(x, (int, float)) or x <= 0 for x in v):
            return "must hold positive numbers"
        return None

    return check


def _four(v):
    return None if len(v) == 4 else "must hold 4 values"


def _four_or_none(v):
    return None if len(v) in (0, 4) else "must be empty or hold 4 values"


def _boxes(ins, slot: str, last: int = 4) -> VarMeta:
    m = ins[slot]
    check_float(ins, slot)
    if not m.shape or (m.shape[-1] >= 0 and m.shape[-1] != last):
        raise ValueError(
            f"input '{slot}' must end in a dim of {last} (box corners), given {list(m.shape)}"
        )
    return m


def _infer_iou(ins, attrs):
    x, y = _boxes(ins, "X"), _boxes(ins, "Y")
    if len(x.shape) != 2 or len(y.shape) != 2:
        raise ValueError(
            f"X and Y must be [N, 4] and [M, 4], given {list(x.shape)} and {list(y.shape)}"
        )
    return {"Out": VarMeta((x.shape[0], y.shape[0]), x.dtype, x.lod_level)}


def _infer_box_coder(ins, attrs):
    prior = _boxes(ins, "PriorBox")
    target = _boxes(ins, "TargetBox")
    if len(prior.shape) != 2:
        raise ValueError(f"PriorBox must be [M, 4], given {list(prior.shape)}")
    var = ins.get("PriorBoxVar")
    if var is not None and list(var.shape) != list(prior.shape) and -1 not in var.shape:
        raise ValueError(
            f"PriorBoxVar must have PriorBox's shape {list(prior.shape)}, given {list(var.shape)}"
        )
    if attrs["code_type"] == "encode_center_size":
        if len(target.shape) != 2:
            raise ValueError(f"TargetBox must be [N, 4] to encode, given {list(target.shape)}")
        return {"OutputBox": VarMeta((target.shape[0], prior.shape[0], 4), target.dtype)}
    if len(target.shape) != 3:
        raise ValueError(f"TargetBox must be [N, M, 4] to decode, given {list(target.shape)}")
    axis = attrs["axis"]
    m = target.shape[1 - axis]
    if m >= 0 and prior.shape[0] >= 0 and m != prior.shape[0]:
        raise ValueError(
            f"TargetBox dim {1 - axis} ({m}) must equal the number of prior boxes ({prior.shape[0]}) "
            f"for axis={axis}"
        )
    return {"OutputBox": VarMeta(tuple(target.shape), target.dtype, target.lod_level)}


def _nchw(ins, slot: str) -> tuple:
    m = ins[slot]
    if len(m.shape) != 4:
        raise ValueError(f"input '{slot}' must be a 4-D NCHW feature map, given {list(m.shape)}")
    return m.shape


def expand_aspect_ratios(ratios, flip: bool) -> list:
    """[1.0] then each new ratio (and its reciprocal with ``flip``), duplicates dropped."""
    out = [1.0]
    for r in ratios:
        if any(abs(r - o) < 1e-6 for o in out):
            continue
        out.append(float(r))
        if flip:
            out.append(1.0 / r)
    return out


def prior_box_count(attrs) -> int:
    ars = expand_aspect_ratios(attrs["aspect_ratios"], attrs["flip"])
    return len(ars) * len(attrs["min_sizes"]) + len(attrs["max_sizes"])


def _infer_prior_box(ins, attrs):
    _, _, h, w = _nchw(ins, "Input")
    _nchw(ins, "Image")
    mins, maxs = attrs["min_sizes"], attrs["max_sizes"]
    if maxs and len(maxs) != len(mins):
        raise ValueError(f"max_sizes must have one entry per min_size ({len(mins)}), given {maxs}")
    for lo, hi in zip(mins, maxs):
        if hi <= lo:
            raise ValueError(
                f"each max_size must be greater than its min_size, given {lo} and {hi}"
            )
    meta = VarMeta((h, w, prior_box_count(attrs), 4), ins["Input"].dtype)
    return {"Boxes": meta, "Variances": meta}


def density_prior_count(attrs) -> int:
    return sum(len(attrs["fixed_ratios"]) * d * d for d in attrs["densities"])


def _infer_density_prior_box(ins, attrs):
    _, _, h, w = _nchw(ins, "Input")
    _nchw(ins, "Image")
    if len(attrs["densities"]) != len(attrs["fixed_sizes"]):
        raise ValueError(
            f"densities and fixed_sizes must have the same length, given {attrs['densities']} "
            f"and {attrs['fixed_sizes']}"
        )
    n = density_prior_count(attrs)
    shape = (h * w * n if h >= 0 and w >= 0 else -1, 4) if attrs["flatten_to_2d"] else (h, w, n, 4)
    meta = VarMeta(shape, ins["Input"].dtype)
    return {"Boxes": meta, "Variances": meta}


def _infer_anchor_generator(ins, attrs):
    _, _, h, w = _nchw(ins, "Input")
    if len(attrs["stride"]) != 2:
        raise ValueError(f"stride must be [stride_w, stride_h], given {attrs['stride']}")
    n = len(attrs["anchor_sizes"]) * len(attrs["aspect_ratios"])
    meta = VarMeta((h, w, n, 4), ins["Input"].dtype)
    return {"Anchors": meta, "Variances": meta}


def _infer_box_clip(ins, attrs):
    x = _boxes(ins, "Input")
    info = ins["ImInfo"]
    if len(info.shape) != 2 or (info.shape[1] >= 0 and info.shape[1] != 3):
        raise ValueError(
            f"ImInfo must be [batch, 3] (height, width, scale), given {list(info.shape)}"
        )
    return {"Output": x}


def _infer_yolo_box(ins, attrs):
    n, c, h, w = _nchw(ins, "X")
    check_float(ins, "X")
    anchors, cls = attrs["anchors"], attrs["class_num"]
    if len(anchors) % 2:
        raise ValueError(f"anchors must hold (width, height) pairs, given {len(anchors)} values")
    an = len(anchors) // 2
    if c >= 0 and c != an * (5 + cls):
        raise ValueError(
            f"X must have anchors * (5 + class_num) = {an} * {5 + cls} = {an * (5 + cls)} channels, "
            f"given {c}"
        )
    size = ins["ImgSize"]
    if len(size.shape) != 2 or (size.shape[1] >= 0 and size.shape[1] != 2):
        raise ValueError(f"ImgSize must be [batch, 2] (height, width), given {list(size.shape)}")
    if size.dtype != "int32":
        raise TypeError(f"ImgSize must be int32, given {size.dtype}")
    boxes = an * h * w if h >= 0 and w >= 0 else -1
    dt = ins["X"].dtype
    return {"Boxes": VarMeta((n, boxes, 4), dt), "Scores": VarMeta((n, boxes, cls), dt)}


def _infer_polygon(ins, attrs):
    _nchw(ins, "Input")
    c = ins["Input"].shape[1]
    if c >= 0 and c % 2:
        raise ValueError(f"Input must have an even number of geometry channels, given {c}")
    return {"Output": ins["Input"]}


def _infer_decode_assign(ins, attrs):
    prior, target, score = _boxes(ins, "PriorBox"), ins["TargetBox"], ins["BoxScore"]
    if len(prior.shape) != 2 or len(target.shape) != 2 or len(score.shape) != 2:
        raise ValueError(
            f"PriorBox [N, 4], TargetBox [N, classes * 4] and BoxScore [N, classes] must be 2-D, "
            f"given {list(prior.shape)}, {list(target.shape)} and {list(score.shape)}"
        )
    cls = score.shape[1]
    if cls >= 0 and target.shape[1] >= 0 and target.shape[1] != 4 * cls:
        raise ValueError(
            f"TargetBox must hold 4 deltas per class ({4 * cls}), given {target.shape[1]}"
        )
    return {"DecodeBox": VarMeta(tuple(target.shape), target.dtype, target.lod_level),
            "OutputAssignBox": VarMeta(tuple(prior.shape), target.dtype, target.lod_level)}  # fmt: skip


def _positive(v):
    return None if v > 0 else "must be positive"


def register(registry) -> None:
    r = registry.register_op
    r(
        OpDef(
            "iou_similarity",
            ["X", "Y"],
            ["Out"],
            {"box_normalized": Attr(bool, True)},
            infer_shape=_infer_iou,
            share_lod=(("X", "Out"),),
            doc="IoU of every box of X with every box of Y",
        )
    )
    r(
        OpDef(
            "box_coder",
            ["PriorBox", "PriorBoxVar?", "TargetBox"],
            ["OutputBox"],
            {
                "code_type": Attr(
                    str,
                    "encode_center_size",
                    lambda v: None if v in CODE_TYPES else f"must be one of {CODE_TYPES}",
                ),
                "box_normalized": Attr(bool, True),
                "axis": Attr(int, 0, lambda v: None if v in (0, 1) else "must be 0 or 1"),
                "variance": Attr(list, [], _four_or_none),
            },
            infer_shape=_infer_box_coder,
            share_lod=(("TargetBox", "OutputBox"),),
            kernel_dtype="TargetBox",
            doc="encode/decode boxes against priors (center-size)",
        )
    )
    prior_attrs = {
        "variances": Attr(list, [0.1, 0.1, 0.2, 0.2], _four),
        "clip": Attr(bool, False),
        "step_w": Attr(float, 0.0),
        "step_h": Attr(float, 0.0),
        "offset": Attr(float, 0.5),
    }
    r(
        OpDef(
            "prior_box",
            ["Input", "Image"],
            ["Boxes", "Variances"],
            {
                "min_sizes": Attr(list, check=_positive_list("min_sizes")),
                "max_sizes": Attr(list, [], _positive_list("max_sizes", True)),
                "aspect_ratios": Attr(list, [1.0], _positive_list("aspect_ratios")),
                "flip": Attr(bool, False),
                "min_max_aspect_ratios_order": Attr(bool, False),
                **prior_attrs,
            },
            infer_shape=_infer_prior_box,
            doc="SSD prior boxes of a feature map",
        )
    )
    r(
        OpDef(
            "density_prior_box",
            ["Input", "Image"],
            ["Boxes", "Variances"],
            {
                "densities": Attr(list, check=_positive_list("densities")),
                "fixed_sizes": Attr(list, check=_positive_list("fixed_sizes")),
                "fixed_ratios": Attr(list, check=_positive_list("fixed_ratios")),
                "flatten_to_2d": Attr(bool, False),
                **prior_attrs,
            },
            infer_shape=_infer_density_prior_box,
            doc="densely tiled prior boxes",
        )
    )
    r(
        OpDef(
            "anchor_generator",
            ["Input"],
            ["Anchors", "Variances"],
            {
                "anchor_sizes": Attr(
                    list, [64.0, 128.0, 256.0, 512.0], _positive_list("anchor_sizes")
                ),
                "aspect_ratios": Attr(list, [0.5, 1.0, 2.0], _positive_list("aspect_ratios")),
                "variances": Attr(list, [0.1, 0.1, 0.2, 0.2], _four),
                "stride": Attr(list, [16.0, 16.0], _positive_list("stride")),
                "offset": Attr(float, 0.5),
            },
            infer_shape=_infer_anchor_generator,
            doc="Faster R-CNN anchors of a feature map",
        )
    )
    r(
        OpDef(
            "box_clip",
            ["Input", "ImInfo"],
            ["Output"],
            {},
            infer_shape=_infer_box_clip,
            share_lod=(("Input", "Output"),),
            doc="clip boxes to their image",
        )
    )
    r(
        OpDef(
            "yolo_box",
            ["X", "ImgSize"],
            ["Boxes", "Scores"],
            {
                "anchors": Attr(
                    list,
                    check=lambda v: (
                        None if v and all(a > 0 for a in v) else "must hold positive sizes"
                    ),
                ),
                "class_num": Attr(int, check=_positive),
                "conf_thresh": Attr(float, 0.01),
                "downsample_ratio": Attr(int, 32, _positive),
                "clip_bbox": Attr(bool, True),
                "scale_x_y": Attr(float, 1.0, _positive),
            },
            infer_shape=_infer_yolo_box,
            doc="YOLOv3 head output to boxes and scores",
        )
    )
    r(
        OpDef(
            "box_decoder_and_assign",
            ["PriorBox", "PriorBoxVar?", "TargetBox", "BoxScore"],
            ["DecodeBox", "OutputAssignBox"],
            {"box_clip": Attr(float, 4.135)},
            infer_shape=_infer_decode_assign,
            kernel_dtype="TargetBox",
            doc="decode per-class deltas (pixel boxes), then each prior's best class's box",
        )
    )
    r(
        OpDef(
            "polygon_box_transform",
            ["Input"],
            ["Output"],
            {},
            infer_shape=_infer_polygon,
            doc="EAST geometry offsets to absolute quadrilateral coordinates",
        )
    )
