"""Box-geometry detection layers (Fluid 1.8 signatures): iou_similarity, box_coder,
prior_box, density_prior_box, anchor_generator, box_clip, yolo_box, polygon_box_transform."""

from __future__ import annotations

from typing import Any

from oar.errors import ArgumentError, ArgumentTypeError
from oar.layer_helper import LayerHelper, check_variable, is_variable

__all__ = [
    "iou_similarity",
    "box_coder",
    "prior_box",
    "density_prior_box",
    "anchor_generator",
    "box_clip",
    "yolo_box",
    "polygon_box_transform",
    "box_decoder_and_assign",
]


def floats(layer: str, name: str, v: Any, n: int | None = None) -> list:
    """A number or a list of numbers as a list of floats (``n`` values if given)."""
    vals = list(v) if isinstance(v, (list, tuple)) else [v]
    if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in vals):
        raise ArgumentTypeError(layer, f"{name} must be a number or a list of numbers, given {v!r}")
    if n is not None and len(vals) != n:
        raise ArgumentError(layer, f"{name} must hold {n} numbers, given {v!r}")
    return [float(x) for x in vals]


def _one(layer: str, op: str, ins: dict, attrs: dict, out: str, dtype: Any, name=None) -> Any:
    helper = LayerHelper(layer, name=name)
    res = helper.create_variable_for_type_inference(dtype)
    helper.append_op(op, ins, {out: [res]}, attrs)
    return res


def _two(layer: str, ins: dict, attrs: dict, outs: tuple, dtype: Any, name=None) -> tuple:
    helper = LayerHelper(layer, name=name)
    a = helper.create_variable_for_type_inference(dtype)
    b = helper.create_variable_for_type_inference(dtype)
    helper.append_op(layer, ins, {outs[0]: [a], outs[1]: [b]}, attrs)
    a.stop_gradient = b.stop_gradient = True
    return a, b


def iou_similarity(x: Any, y: Any, box_normalized: bool = True, name: str | None = None) -> Any:
    """[N, M] intersection over union of boxes ``x`` [N, 4] and ``y`` [M, 4] (x1, y1, x2, y2);
    with ``box_normalized=False`` pixel boxes include both end pixels."""
    check_variable("iou_similarity", "x", x)
    check_variable("iou_similarity", "y", y)
    attrs = {"box_normalized": bool(box_normalized)}
    return _one(
        "iou_similarity", "iou_similarity", {"X": [x], "Y": [y]}, attrs, "Out", x.dtype, name
    )


def box_coder(
    prior_box: Any,
    prior_box_var: Any,
    target_box: Any,
    code_type: str = "encode_center_size",
    box_normalized: bool = True,
    name: str | None = None,
    axis: int = 0,
) -> Any:
    """Encode ``target_box`` [N, 4] against ``prior_box`` [M, 4] as [N, M, 4] center-size
    offsets, or decode [N, M, 4] offsets back to boxes. ``prior_box_var`` is a [M, 4]
    variable, 4 numbers, or None (no variance; Fluid 1.8.5 refuses None)."""
    layer = "box_coder"
    check_variable(layer, "prior_box", prior_box)
    check_variable(layer, "target_box", target_box)
    if code_type not in ("encode_center_size", "decode_center_size"):
        raise ArgumentError(
            layer,
            f"code_type must be 'encode_center_size' or 'decode_center_size', given {code_type!r}",
        )
    if axis not in (0, 1):
        raise ArgumentError(layer, f"axis must be 0 or 1, given {axis!r}")
    ins = {"PriorBox": [prior_box], "TargetBox": [target_box]}
    attrs: dict = {"code_type": code_type, "box_normalized": bool(box_normalized), "axis": axis}
    if is_variable(prior_box_var):
        ins["PriorBoxVar"] = [prior_box_var]
    elif prior_box_var is not None:
        attrs["variance"] = floats(layer, "prior_box_var", prior_box_var, 4)
    return _one(layer, layer, ins, attrs, "OutputBox", target_box.dtype, name)


def _steps(layer: str, steps: Any) -> list:
    return floats(layer, "steps", steps, 2)


def prior_box(
    input: Any,
    image: Any,
    min_sizes: Any,
    max_sizes: Any = None,
    aspect_ratios: Any = [1.0],  # noqa: B006 (Fluid's default)
    variance: Any = [0.1, 0.1, 0.2, 0.2],  # noqa: B006
    flip: bool = False,
    clip: bool = False,
    steps: Any = [0.0, 0.0],  # noqa: B006
    offset: float = 0.5,
    name: str | None = None,
    min_max_aspect_ratios_order: bool = False,
) -> tuple:
    """SSD prior boxes of feature map ``input`` for ``image``: (boxes, variances), each
    [H, W, num_priors, 4] in coordinates normalised by the image size."""
    layer = "prior_box"
    check_variable(layer, "input", input)
    check_variable(layer, "image", image)
    attrs = {
        "min_sizes": floats(layer, "min_sizes", min_sizes),
        "max_sizes": [] if max_sizes is None else floats(layer, "max_sizes", max_sizes),
        "aspect_ratios": floats(layer, "aspect_ratios", aspect_ratios),
        "variances": floats(layer, "variance", variance, 4),
        "flip": bool(flip),
        "clip": bool(clip),
        "step_w": _steps(layer, steps)[0],
        "step_h": _steps(layer, steps)[1],
        "offset": float(offset),
        "min_max_aspect_ratios_order": bool(min_max_aspect_ratios_order),
    }
    return _two(
        layer,
        {"Input": [input], "Image": [image]},
        attrs,
        ("Boxes", "Variances"),
        input.dtype,
        name,
    )


def density_prior_box(
    input: Any,
    image: Any,
    densities: Any = None,
    fixed_sizes: Any = None,
    fixed_ratios: Any = None,
    variance: Any = [0.1, 0.1, 0.2, 0.2],  # noqa: B006
    clip: bool = False,
    steps: Any = [0.0, 0.0],  # noqa: B006
    offset: float = 0.5,
    flatten_to_2d: bool = False,
    name: str | None = None,
) -> tuple:
    """Priors tiled ``density`` x ``density`` times per cell for each fixed size and ratio:
    (boxes, variances), [H, W, num_priors, 4] (or [H * W * num_priors, 4] flattened)."""
    layer = "density_prior_box"
    check_variable(layer, "input", input)
    check_variable(layer, "image", image)
    for arg, v in (
        ("densities", densities),
        ("fixed_sizes", fixed_sizes),
        ("fixed_ratios", fixed_ratios),
    ):
        if v is None:
            raise ArgumentError(layer, f"{arg} is required (a list of numbers)")
    dens = densities if isinstance(densities, (list, tuple)) else [densities]
    if not all(isinstance(d, int) and not isinstance(d, bool) and d > 0 for d in dens):
        raise ArgumentError(layer, f"densities must be positive ints, given {densities!r}")
    attrs = {
        "densities": list(dens),
        "fixed_sizes": floats(layer, "fixed_sizes", fixed_sizes),
        "fixed_ratios": floats(layer, "fixed_ratios", fixed_ratios),
        "variances": floats(layer, "variance", variance, 4),
        "clip": bool(clip),
        "step_w": _steps(layer, steps)[0],
        "step_h": _steps(layer, steps)[1],
        "offset": float(offset),
        "flatten_to_2d": bool(flatten_to_2d),
    }
    return _two(
        layer,
        {"Input": [input], "Image": [image]},
        attrs,
        ("Boxes", "Variances"),
        input.dtype,
        name,
    )


def anchor_generator(
    input: Any,
    anchor_sizes: Any = None,
    aspect_ratios: Any = None,
    variance: Any = [0.1, 0.1, 0.2, 0.2],  # noqa: B006
    stride: Any = None,
    offset: float = 0.5,
    name: str | None = None,
) -> tuple:
    """Faster R-CNN anchors of feature map ``input``: (anchors, variances), each
    [H, W, len(aspect_ratios) * len(anchor_sizes), 4] in input-image pixels."""
    layer = "anchor_generator"
    check_variable(layer, "input", input)
    attrs: dict = {"variances": floats(layer, "variance", variance, 4), "offset": float(offset)}
    if anchor_sizes is not None:
        attrs["anchor_sizes"] = floats(layer, "anchor_sizes", anchor_sizes)
    if aspect_ratios is not None:
        attrs["aspect_ratios"] = floats(layer, "aspect_ratios", aspect_ratios)
    if stride is not None:
        attrs["stride"] = floats(layer, "stride", stride, 2)
    return _two(layer, {"Input": [input]}, attrs, ("Anchors", "Variances"), input.dtype, name)


def box_clip(input: Any, im_info: Any, name: str | None = None) -> Any:
    """Clip boxes (LoD: boxes per image) to their image: x to [0, w / scale - 1], y to
    [0, h / scale - 1], ``im_info`` rows being (height, width, scale)."""
    check_variable("box_clip", "input", input)
    check_variable("box_clip", "im_info", im_info)
    ins = {"Input": [input], "ImInfo": [im_info]}
    return _one("box_clip", "box_clip", ins, {}, "Output", input.dtype, name)


def yolo_box(
    x: Any,
    img_size: Any,
    anchors: Any,
    class_num: int,
    conf_thresh: float,
    downsample_ratio: int,
    clip_bbox: bool = True,
    name: str | None = None,
    scale_x_y: float = 1.0,
) -> tuple:
    """Decode a YOLOv3 head ``x`` [N, an * (5 + class_num), H, W] into (boxes [N, an*H*W, 4],
    scores [N, an*H*W, class_num]) in the pixels of ``img_size`` [N, 2] (height, width)."""
    layer = "yolo_box"
    check_variable(layer, "x", x)
    check_variable(layer, "img_size", img_size)
    if not isinstance(anchors, (list, tuple)) or not all(
        isinstance(a, int) and not isinstance(a, bool) for a in anchors
    ):
        raise ArgumentTypeError(layer, f"anchors must be a list of ints, given {anchors!r}")
    if not isinstance(class_num, int) or isinstance(class_num, bool):
        raise ArgumentTypeError(layer, f"class_num must be an int, given {class_num!r}")
    attrs = {
        "anchors": list(anchors),
        "class_num": class_num,
        "conf_thresh": float(conf_thresh),
        "downsample_ratio": int(downsample_ratio),
        "clip_bbox": bool(clip_bbox),
        "scale_x_y": float(scale_x_y),
    }
    return _two(layer, {"X": [x], "ImgSize": [img_size]}, attrs, ("Boxes", "Scores"), x.dtype, name)


def polygon_box_transform(input: Any, name: str | None = None) -> Any:
    """EAST geometry maps [N, 2k, H, W] of offsets to absolute coordinates (4 * grid - offset)."""
    check_variable("polygon_box_transform", "input", input)
    ins = {"Input": [input]}
    return _one(
        "polygon_box_transform", "polygon_box_transform", ins, {}, "Output", input.dtype, name
    )


def box_decoder_and_assign(
    prior_box: Any,
    prior_box_var: Any,
    target_box: Any,
    box_score: Any,
    box_clip: float,
    name: str | None = None,
) -> tuple:
    """Decode ``target_box`` [N, classes * 4] against pixel priors [N, 4] (the width/height
    deltas clipped at ``box_clip``): (decoded boxes [N, classes * 4], each prior's box of its
    best non-background class by ``box_score`` [N, classes])."""
    layer = "box_decoder_and_assign"
    for arg, v in (("prior_box", prior_box), ("target_box", target_box), ("box_score", box_score)):
        check_variable(layer, arg, v)
    ins = {"PriorBox": [prior_box], "TargetBox": [target_box], "BoxScore": [box_score]}
    if prior_box_var is not None:
        check_variable(layer, "prior_box_var", prior_box_var)
        ins["PriorBoxVar"] = [prior_box_var]
    attrs = {"box_clip": floats(layer, "box_clip", box_clip, 1)[0]}
    return _two(layer, ins, attrs, ("DecodeBox", "OutputAssignBox"), target_box.dtype, name)
