"""Kernels of the box-geometry detection ops (see ``oar.ops.detection_boxes``).

Priors and anchors depend only on shapes and attrs: they are built as one [P] vector of
half-widths/heights (or offsets) per prior and broadcast against the grid of centres.
"""

from __future__ import annotations

import math

from oar.api import expand_aspect_ratios
from oar.errors import ShapeError

from oar_kernels_cpu.kernels import FLOATS, array_module, kernel

xp = array_module(__name__)


def _off(normalized: bool) -> float:
    return 0.0 if normalized else 1.0


def iou_matrix(x, y, normalized: bool = True):
    """[N, M] IoU of boxes x [N, 4] and y [M, 4] (corners); pixel boxes count both ends."""
    off = _off(normalized)
    ax = (x[:, 2] - x[:, 0] + off) * (x[:, 3] - x[:, 1] + off)
    ay = (y[:, 2] - y[:, 0] + off) * (y[:, 3] - y[:, 1] + off)
    iw = xp.minimum(x[:, None, 2], y[None, :, 2]) - xp.maximum(x[:, None, 0], y[None, :, 0]) + off
    ih = xp.minimum(x[:, None, 3], y[None, :, 3]) - xp.maximum(x[:, None, 1], y[None, :, 1]) + off
    inter = xp.maximum(iw, 0) * xp.maximum(ih, 0)
    union = ax[:, None] + ay[None, :] - inter
    return (inter / xp.where(union > 0, union, 1)).astype(x.dtype)


@kernel("iou_similarity", FLOATS)
def iou_similarity(inputs, attrs):
    return {"Out": iou_matrix(inputs["X"], inputs["Y"], attrs["box_normalized"])}


def center_size(b, normalized: bool) -> tuple:
    """(cx, cy, w, h) of corner boxes along the last axis."""
    off = _off(normalized)
    w = b[..., 2] - b[..., 0] + off
    h = b[..., 3] - b[..., 1] + off
    return b[..., 0] + 0.5 * w, b[..., 1] + 0.5 * h, w, h


def _variance(inputs, attrs, prior, dtype):
    var = inputs.get("PriorBoxVar")
    if var is not None:
        return var.astype(dtype, copy=False)
    v = attrs["variance"] or [1.0, 1.0, 1.0, 1.0]
    return xp.broadcast_to(xp.asarray(v, dtype=dtype), prior.shape)


def encode(prior, var, target, normalized: bool):
    """[N, M, 4]: each target box (rows) against each prior (columns)."""
    pcx, pcy, pw, ph = center_size(prior, normalized)
    _, _, tw, th = center_size(target[:, None, :], normalized)
    # Fluid 1.8.5 centres the target at the corners' midpoint even for pixel boxes
    tcx = (target[:, None, 0] + target[:, None, 2]) * 0.5
    tcy = (target[:, None, 1] + target[:, None, 3]) * 0.5
    out = xp.stack(
        [(tcx - pcx) / pw, (tcy - pcy) / ph, xp.log(xp.abs(tw / pw)), xp.log(xp.abs(th / ph))],
        axis=-1,
    )
    return out / var[None, :, :]


def decode(prior, var, deltas, normalized: bool, axis: int = 0):
    """Deltas [N, M, 4] back to corner boxes; priors run along dim 1 (axis 0) or dim 0 (axis 1)."""
    p = prior[None, :, :] if axis == 0 else prior[:, None, :]
    v = var[None, :, :] if axis == 0 else var[:, None, :]
    pcx, pcy, pw, ph = center_size(p, normalized)
    cx = v[..., 0] * deltas[..., 0] * pw + pcx
    cy = v[..., 1] * deltas[..., 1] * ph + pcy
    w = xp.exp(v[..., 2] * deltas[..., 2]) * pw
    h = xp.exp(v[..., 3] * deltas[..., 3]) * ph
    off = _off(normalized)
    return xp.stack([cx - 0.5 * w, cy - 0.5 * h, cx + 0.5 * w - off, cy + 0.5 * h - off], axis=-1)


@kernel("box_coder", FLOATS)
def box_coder(inputs, attrs):
    target = inputs["TargetBox"]
    prior = inputs["PriorBox"].astype(target.dtype, copy=False)
    var = _variance(inputs, attrs, prior, target.dtype)
    norm = attrs["box_normalized"]
    if attrs["code_type"] == "encode_center_size":
        out = encode(prior, var, target, norm)
    else:
        axis = attrs["axis"]
        if target.shape[1 - axis] != prior.shape[0]:
            raise ShapeError(
                f"box_coder: TargetBox {list(target.shape)} dim {1 - axis} must equal the "
                f"{prior.shape[0]} prior boxes (axis={axis})"
            )
        out = decode(prior, var, target, norm, axis)
    return {"OutputBox": out.astype(target.dtype, copy=False)}


def _steps(inputs, attrs) -> tuple:
    h, w = inputs["Input"].shape[2:]
    ih, iw = inputs["Image"].shape[2:]
    sw = attrs["step_w"] or iw / w
    sh = attrs["step_h"] or ih / h
    return h, w, ih, iw, sw, sh


def _grid_boxes(h, w, ih, iw, sw, sh, offset, half_w, half_h, dx=None, dy=None, dtype="float32"):
    """[h, w, P, 4] normalised corner boxes around the cell centres (+ per-prior shifts)."""
    cx = (xp.arange(w, dtype="float64") + offset) * sw
    cy = (xp.arange(h, dtype="float64") + offset) * sh
    hw, hh = xp.asarray(half_w, dtype="float64"), xp.asarray(half_h, dtype="float64")
    px = cx[None, :, None] + (0.0 if dx is None else xp.asarray(dx, dtype="float64"))
    py = cy[:, None, None] + (0.0 if dy is None else xp.asarray(dy, dtype="float64"))
    px, py = xp.broadcast_to(px, (h, w, len(half_w))), xp.broadcast_to(py, (h, w, len(half_w)))
    boxes = xp.stack([(px - hw) / iw, (py - hh) / ih, (px + hw) / iw, (py + hh) / ih], axis=-1)
    return boxes.astype(dtype)


def _variances(boxes, attrs):
    return xp.broadcast_to(xp.asarray(attrs["variances"], dtype=boxes.dtype), boxes.shape).copy()


def _prior_halves(attrs) -> tuple:
    ars = expand_aspect_ratios(attrs["aspect_ratios"], attrs["flip"])
    maxs = attrs["max_sizes"]
    hw: list = []
    hh: list = []
    for i, m in enumerate(attrs["min_sizes"]):
        big = [math.sqrt(m * maxs[i]) / 2] if maxs else []
        shaped = [(m * math.sqrt(a) / 2, m / math.sqrt(a) / 2) for a in ars]
        if attrs["min_max_aspect_ratios_order"]:
            shaped = [(m / 2, m / 2)] + [(b, b) for b in big]
            shaped += [
                (m * math.sqrt(a) / 2, m / math.sqrt(a) / 2) for a in ars if abs(a - 1) >= 1e-6
            ]
        else:
            shaped += [(b, b) for b in big]
        hw += [s[0] for s in shaped]
        hh += [s[1] for s in shaped]
    return hw, hh


@kernel("prior_box", FLOATS)
def prior_box(inputs, attrs):
    h, w, ih, iw, sw, sh = _steps(inputs, attrs)
    hw, hh = _prior_halves(attrs)
    boxes = _grid_boxes(h, w, ih, iw, sw, sh, attrs["offset"], hw, hh, dtype=inputs["Input"].dtype)
    if attrs["clip"]:
        boxes = xp.clip(boxes, 0.0, 1.0)
    return {"Boxes": boxes, "Variances": _variances(boxes, attrs)}


@kernel("density_prior_box", FLOATS)
def density_prior_box(inputs, attrs):
    h, w, ih, iw, sw, sh = _steps(inputs, attrs)
    step = int((sw + sh) * 0.5)
    hw: list = []
    hh: list = []
    dx: list = []
    dy: list = []
    for size, dens in zip(attrs["fixed_sizes"], attrs["densities"]):
        shift = step // dens  # Fluid 1.8.5 shifts by whole pixels
        for r in attrs["fixed_ratios"]:
            for i in range(dens):
                for j in range(dens):
                    hw.append(size * math.sqrt(r) / 2)
                    hh.append(size / math.sqrt(r) / 2)
                    dx.append(-step / 2 + shift / 2 + j * shift)
                    dy.append(-step / 2 + shift / 2 + i * shift)
    boxes = _grid_boxes(
        h, w, ih, iw, sw, sh, attrs["offset"], hw, hh, dx, dy, inputs["Input"].dtype
    )
    boxes = xp.clip(boxes, 0.0, 1.0)  # the corners are always kept inside the image
    if attrs["flatten_to_2d"]:
        boxes = boxes.reshape(-1, 4)
    return {"Boxes": boxes, "Variances": _variances(boxes, attrs)}


@kernel("anchor_generator", FLOATS)
def anchor_generator(inputs, attrs):
    h, w = inputs["Input"].shape[2:]
    sw, sh = attrs["stride"]
    off = attrs["offset"]
    hw: list = []
    hh: list = []
    for ar in attrs["aspect_ratios"]:
        base_w = round(math.sqrt(sw * sh / ar))
        base_h = round(base_w * ar)
        for size in attrs["anchor_sizes"]:
            hw.append(0.5 * (size / sw * base_w - 1))
            hh.append(0.5 * (size / sh * base_h - 1))
    cx = xp.arange(w, dtype="float64") * sw + off * (sw - 1)
    cy = xp.arange(h, dtype="float64") * sh + off * (sh - 1)
    shape = (h, w, len(hw))
    px = xp.broadcast_to(cx[None, :, None], shape)
    py = xp.broadcast_to(cy[:, None, None], shape)
    aw, ah = xp.asarray(hw, dtype="float64"), xp.asarray(hh, dtype="float64")
    anchors = xp.stack([px - aw, py - ah, px + aw, py + ah], axis=-1).astype(inputs["Input"].dtype)
    return {"Anchors": anchors, "Variances": _variances(anchors, attrs)}


def _image_of_rows(boxes, n_images: int):
    """Image index per row of ``boxes``: from its LoD, else its leading batch dim."""
    lod = getattr(boxes, "_lod", None)
    if lod:
        off = [int(o) for o in lod[-1]]
        if len(off) - 1 != n_images:
            raise ShapeError(
                f"box_clip: Input has {len(off) - 1} images in its LoD, ImInfo {n_images}"
            )
        return [(off[i], off[i + 1]) for i in range(n_images)]
    arr = boxes._array if hasattr(boxes, "_array") else boxes
    if arr.ndim == 3 and arr.shape[0] == n_images:
        return None  # batched [N, M, 4]
    if n_images == 1:
        return [(0, arr.shape[0])]
    raise ShapeError(
        f"box_clip: Input {list(arr.shape)} has no LoD to tell which of the {n_images} images "
        f"each box belongs to"
    )


@kernel("box_clip", FLOATS, lod=True)
def box_clip(inputs, attrs):
    t = inputs["Input"]
    x = t._array if hasattr(t, "_array") else t
    info = inputs["ImInfo"]
    info = info._array if hasattr(info, "_array") else info
    # the largest valid pixel is (size / scale, rounded) - 1
    hi_h = xp.round(info[:, 0] / info[:, 2]) - 1
    hi_w = xp.round(info[:, 1] / info[:, 2]) - 1
    spans = _image_of_rows(t, info.shape[0])
    lim = xp.stack([hi_w, hi_h, hi_w, hi_h], axis=-1).astype(x.dtype)
    if spans is None:
        lim = lim[:, None, :]
    else:
        reps = xp.asarray([b - a for a, b in spans])
        lim = xp.repeat(lim, reps, axis=0).reshape((x.shape[0],) + (1,) * (x.ndim - 2) + (4,))
    out = xp.clip(x, 0, None)
    out = xp.minimum(out, lim)
    return {"Output": out.astype(x.dtype, copy=False)}


def _sigmoid(v):
    return 1.0 / (1.0 + xp.exp(-v))


@kernel("yolo_box", FLOATS)
def yolo_box(inputs, attrs):
    x = inputs["X"]
    n, c, h, w = x.shape
    anchors = attrs["anchors"]
    an, cls = len(anchors) // 2, attrs["class_num"]
    x = x.reshape(n, an, 5 + cls, h, w)
    size = inputs["ImgSize"].astype(x.dtype)
    img_h, img_w = size[:, 0, None, None, None], size[:, 1, None, None, None]
    scale = attrs["scale_x_y"]
    bias = -0.5 * (scale - 1.0)
    gx = xp.arange(w, dtype=x.dtype)[None, None, None, :]
    gy = xp.arange(h, dtype=x.dtype)[None, None, :, None]
    aw = xp.asarray(anchors[0::2], dtype=x.dtype)[None, :, None, None]
    ah = xp.asarray(anchors[1::2], dtype=x.dtype)[None, :, None, None]
    ds = attrs["downsample_ratio"]
    cx = (gx + _sigmoid(x[:, :, 0]) * scale + bias) * img_w / w
    cy = (gy + _sigmoid(x[:, :, 1]) * scale + bias) * img_h / h
    bw = xp.exp(x[:, :, 2]) * aw * img_w / (ds * w)
    bh = xp.exp(x[:, :, 3]) * ah * img_h / (ds * h)
    conf = _sigmoid(x[:, :, 4])
    keep = (conf >= attrs["conf_thresh"]).astype(x.dtype)
    x1, y1, x2, y2 = cx - bw / 2, cy - bh / 2, cx + bw / 2, cy + bh / 2
    if attrs["clip_bbox"]:
        x1, y1 = xp.maximum(x1, 0), xp.maximum(y1, 0)
        x2, y2 = xp.minimum(x2, img_w - 1), xp.minimum(y2, img_h - 1)
    boxes = xp.stack([x1, y1, x2, y2], axis=-1) * keep[..., None]
    scores = (conf * keep)[:, :, None] * _sigmoid(x[:, :, 5:])  # [n, an, cls, h, w]
    return {
        "Boxes": boxes.reshape(n, an * h * w, 4).astype(x.dtype, copy=False),
        "Scores": scores.transpose(0, 1, 3, 4, 2).reshape(n, an * h * w, cls).astype(x.dtype),
    }


@kernel("polygon_box_transform", FLOATS)
def polygon_box_transform(inputs, attrs):
    x = inputs["Input"]
    _, c, h, w = x.shape
    grid_w = xp.broadcast_to(xp.arange(w, dtype=x.dtype)[None, :] * 4, (h, w))
    grid_h = xp.broadcast_to(xp.arange(h, dtype=x.dtype)[:, None] * 4, (h, w))
    base = xp.stack([grid_w if k % 2 == 0 else grid_h for k in range(c)])
    return {"Output": (base[None] - x).astype(x.dtype, copy=False)}


@kernel("box_decoder_and_assign", FLOATS)
def box_decoder_and_assign(inputs, attrs):
    target, score = inputs["TargetBox"], inputs["BoxScore"]
    prior = inputs["PriorBox"].astype(target.dtype, copy=False)
    n, cls = score.shape
    var = inputs.get("PriorBoxVar")
    var = xp.ones(4, dtype=target.dtype) if var is None else var.reshape(-1, 4).astype(target.dtype)
    pcx, pcy, pw, ph = (v[:, None] for v in center_size(prior, False))
    d = target.reshape(n, cls, 4)
    var = var[:, None, :] if var.shape[0] == n else var.reshape(1, 1, 4)
    clip = attrs["box_clip"]
    cx = var[..., 0] * d[..., 0] * pw + pcx
    cy = var[..., 1] * d[..., 1] * ph + pcy
    w = xp.exp(xp.minimum(var[..., 2] * d[..., 2], clip)) * pw
    h = xp.exp(xp.minimum(var[..., 3] * d[..., 3], clip)) * ph
    boxes = xp.stack([cx - w / 2, cy - h / 2, cx + w / 2 - 1, cy + h / 2 - 1], axis=-1).astype(
        target.dtype
    )
    # the best class other than the background (class 0) decides each prior's box
    best = xp.argmax(score[:, 1:], axis=1) + 1 if cls > 1 else xp.zeros(n, dtype="int64")
    assigned = xp.take_along_axis(boxes, best[:, None, None], axis=1)[:, 0]
    return {"DecodeBox": boxes.reshape(n, cls * 4), "OutputAssignBox": assigned}
