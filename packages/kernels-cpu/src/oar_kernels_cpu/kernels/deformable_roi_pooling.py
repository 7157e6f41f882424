"""Kernels of deformable_psroi_pooling (numpy only: a loop over ROIs, bins and samples,
vectorised over channels)."""

from __future__ import annotations

import math

import numpy as np

from oar_kernels_cpu.kernels import FLOATS, kernel
from oar_kernels_cpu.kernels._sequence import array_of
from oar_kernels_cpu.kernels.detection_roi import roi_images


def _round(v: float) -> int:
    return int(math.floor(abs(v) + 0.5)) * (1 if v >= 0 else -1)


def _corners(fm, y, x):
    """The 4 neighbours' values [C] and the fractional parts (DCN's floor/ceil bilinear)."""
    y1, x1, y2, x2 = math.floor(y), math.floor(x), math.ceil(y), math.ceil(x)
    return (
        fm[:, y1, x1],
        fm[:, y2, x1],
        fm[:, y1, x2],
        fm[:, y2, x2],
        (y1, x1, y2, x2),
        y - y1,
        x - x1,
    )


def _samples(inputs, attrs):
    """Yield (roi, out channel slice, bin i, j, input channels, samples, trans index, scale)
    where samples are (y, x) points inside the map."""
    x = array_of(inputs["Input"])
    rois = array_of(inputs["ROIs"])
    trans = array_of(inputs["Trans"])
    n, c, h, w = x.shape
    img = roi_images(inputs, n, "deformable_roi_pooling")
    ph, pw, spp = attrs["pooled_height"], attrs["pooled_width"], attrs["sample_per_part"]
    gh, gw = attrs["group_size"]
    part_h, part_w = attrs["part_size"]
    out_dim, scale, std = attrs["output_dim"], attrs["spatial_scale"], attrs["trans_std"]
    classes = 1 if attrs["no_trans"] else trans.shape[1] // 2
    per_class = out_dim // classes
    ctop = np.arange(out_dim)
    for r, roi in enumerate(rois):
        sw, sh = _round(float(roi[0])) * scale - 0.5, _round(float(roi[1])) * scale - 0.5
        ew, eh = (
            (_round(float(roi[2])) + 1) * scale - 0.5,
            (_round(float(roi[3])) + 1) * scale - 0.5,
        )
        rw, rh = max(ew - sw, 0.1), max(eh - sh, 0.1)
        bw, bh = rw / pw, rh / ph
        for i in range(ph):
            for j in range(pw):
                pi, pj = int(math.floor(i / ph * part_h)), int(math.floor(j / pw * part_w))
                g_i, g_j = min(max(i * gh // ph, 0), gh - 1), min(max(j * gw // pw, 0), gw - 1)
                chans = (ctop * gh + g_i) * gw + g_j if attrs["position_sensitive"] else ctop
                for cls in range(classes):
                    sel = slice(cls * per_class, (cls + 1) * per_class)
                    if attrs["no_trans"]:
                        tx = ty = 0.0
                    else:
                        tx, ty = (
                            trans[r, 2 * cls, pi, pj] * std,
                            trans[r, 2 * cls + 1, pi, pj] * std,
                        )
                    x0, y0 = j * bw + sw + tx * rw, i * bh + sh + ty * rh
                    pts = []
                    for a in range(spp):
                        for b in range(spp):
                            yy, xx = y0 + a * bh / spp, x0 + b * bw / spp
                            if -0.5 <= xx <= w - 0.5 and -0.5 <= yy <= h - 0.5:
                                pts.append((min(max(yy, 0.0), h - 1.0), min(max(xx, 0.0), w - 1.0)))
                    yield r, img[r], sel, i, j, chans[sel], pts, (cls, pi, pj), (rw, rh)


@kernel("deformable_psroi_pooling", FLOATS, lod=True, generic=False)
def deformable_psroi_pooling(inputs, attrs):
    x = array_of(inputs["Input"]).astype(np.float64)
    r_count = array_of(inputs["ROIs"]).shape[0]
    shape = (r_count, attrs["output_dim"], attrs["pooled_height"], attrs["pooled_width"])
    out, count = np.zeros(shape), np.zeros(shape)
    for r, im, sel, i, j, chans, pts, _, _ in _samples(inputs, attrs):
        fm = x[im][chans]
        for yy, xx in pts:
            v11, v12, v21, v22, _, dy, dx = _corners(fm, yy, xx)
            out[r, sel, i, j] += (
                (1 - dx) * (1 - dy) * v11
                + (1 - dx) * dy * v12
                + dx * (1 - dy) * v21
                + dx * dy * v22
            )
        count[r, sel, i, j] = len(pts)
    dt = inputs["Input"].dtype
    return {"Output": (out / np.maximum(count, 1)).astype(dt), "TopCount": count.astype(dt)}


@kernel("deformable_psroi_pooling_grad", FLOATS, lod=True, generic=False)
def deformable_psroi_pooling_grad(inputs, attrs):
    x = array_of(inputs["Input"]).astype(np.float64)
    trans = array_of(inputs["Trans"])
    dout = array_of(inputs["Output@GRAD"]).astype(np.float64)
    dx_in = np.zeros_like(x)
    dtrans = np.zeros(trans.shape)
    std = attrs["trans_std"]
    for r, im, sel, i, j, chans, pts, (cls, pi, pj), (rw, rh) in _samples(inputs, attrs):
        if not pts:
            continue
        g = dout[r, sel, i, j] / len(pts)
        fm = x[im][chans]
        for yy, xx in pts:
            v11, v12, v21, v22, (y1, x1, y2, x2), dy, dx = _corners(fm, yy, xx)
            for (cy, cx), wgt in (((y1, x1), (1 - dx) * (1 - dy)), ((y2, x1), (1 - dx) * dy),
                                  ((y1, x2), dx * (1 - dy)), ((y2, x2), dx * dy)):  # fmt: skip
                np.add.at(dx_in[im], (chans, cy, cx), g * wgt)
            if not attrs["no_trans"]:
                gx = (v21 - v11) * (1 - dy) + (v22 - v12) * dy
                gy = (v12 - v11) * (1 - dx) + (v22 - v21) * dx
                dtrans[r, 2 * cls, pi, pj] += float(np.sum(g * gx)) * std * rw
                dtrans[r, 2 * cls + 1, pi, pj] += float(np.sum(g * gy)) * std * rh
    dt = inputs["Input"].dtype
    return {"Input@GRAD": dx_in.astype(dt), "Trans@GRAD": dtrans.astype(dt)}
