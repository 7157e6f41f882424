"""Kernels of the ROI pooling ops (numpy only: one vectorised gather per ROI).

Forward and backward share the per-ROI sampling geometry: the backward scatters
``Out@GRAD`` through the same indices and weights with ``np.add.at``.
"""

from __future__ import annotations

import math

import numpy as np
from oar.api import LoDTensor
from oar.errors import ShapeError

from oar_kernels_cpu.kernels import FLOATS, kernel
from oar_kernels_cpu.kernels._sequence import array_of


def roi_images(inputs, n_images: int, op: str) -> np.ndarray:
    """The image index of each ROI: from RoisLod offsets, BatchRoINums counts or the ROIs' LoD."""
    rois = inputs["ROIs"]
    r = array_of(rois).shape[0]
    if inputs.get("BatchRoINums") is not None:
        counts = array_of(inputs["BatchRoINums"]).reshape(-1).astype(np.int64)
        off = np.concatenate([[0], np.cumsum(counts)])
    elif inputs.get("RoisLod") is not None:
        off = array_of(inputs["RoisLod"]).reshape(-1).astype(np.int64)
    elif isinstance(rois, LoDTensor) and rois.lod():
        off = np.asarray(rois.lod()[-1], dtype=np.int64)
    elif n_images == 1:
        return np.zeros(r, dtype=np.int64)
    else:
        raise ShapeError(
            f"{op}: ROIs has no LoD to say which of the {n_images} images each of its {r} boxes "
            f"belongs to (feed ROIs as a LoDTensor, or give rois_lod)"
        )
    if len(off) != n_images + 1 or off[0] != 0 or off[-1] != r:
        raise ShapeError(
            f"{op}: the ROI offsets {off.tolist()} do not split {r} ROIs over {n_images} images"
        )
    return np.repeat(np.arange(n_images), np.diff(off))


def _axis_samples(start, bin_size, pooled, grid, size):
    """Low/high indices, weights and validity of bilinear samples along one axis: [pooled*grid]."""
    t = (np.arange(pooled)[:, None] + (np.arange(grid)[None, :] + 0.5) / grid) * bin_size + start
    t = t.reshape(-1)
    valid = (t >= -1.0) & (t <= size)
    t = np.maximum(t, 0.0)
    low = np.floor(t).astype(np.int64)
    edge = low >= size - 1
    low = np.where(edge, size - 1, low)
    high = np.where(edge, size - 1, low + 1)
    t = np.where(edge, low, t)
    frac = t - low
    return low, high, 1.0 - frac, frac, valid


def _align_geometry(roi, attrs, h, w):
    scale = attrs["spatial_scale"]
    ph, pw = attrs["pooled_height"], attrs["pooled_width"]
    x1, y1, x2, y2 = (float(v) * scale for v in roi)
    rh, rw = max(y2 - y1, 1.0), max(x2 - x1, 1.0)
    bh, bw = rh / ph, rw / pw
    s = attrs["sampling_ratio"]
    gh = s if s > 0 else math.ceil(rh / ph)
    gw = s if s > 0 else math.ceil(rw / pw)
    return _axis_samples(y1, bh, ph, gh, h), _axis_samples(x1, bw, pw, gw, w), gh, gw


def _align_terms(ys, xs):
    """The 4 (row index, col index, weight) bilinear terms, weights [Sy, Sx]."""
    yl, yh, wyl, wyh, vy = ys
    xl, xh, wxl, wxh, vx = xs
    mask = vy[:, None] & vx[None, :]
    for yi, wy in ((yl, wyl), (yh, wyh)):
        for xi, wx in ((xl, wxl), (xh, wxh)):
            yield yi, xi, np.where(mask, wy[:, None] * wx[None, :], 0.0)


@kernel("roi_align", FLOATS, lod=True, generic=False)
def roi_align(inputs, attrs):
    x = array_of(inputs["X"])
    n, c, h, w = x.shape
    rois = array_of(inputs["ROIs"])
    img = roi_images(inputs, n, "roi_align")
    ph, pw = attrs["pooled_height"], attrs["pooled_width"]
    out = np.zeros((len(rois), c, ph, pw), dtype=x.dtype)
    for r, roi in enumerate(rois):
        ys, xs, gh, gw = _align_geometry(roi, attrs, h, w)
        fm = x[img[r]]
        acc = np.zeros((c, len(ys[0]), len(xs[0])))
        for yi, xi, wt in _align_terms(ys, xs):
            acc += fm[:, yi[:, None], xi[None, :]] * wt
        out[r] = acc.reshape(c, ph, gh, pw, gw).mean(axis=(2, 4))
    return {"Out": out}


@kernel("roi_align_grad", FLOATS, lod=True, generic=False)
def roi_align_grad(inputs, attrs):
    x = array_of(inputs["X"])
    n, c, h, w = x.shape
    rois = array_of(inputs["ROIs"])
    dout = array_of(inputs["Out@GRAD"])
    img = roi_images(inputs, n, "roi_align")
    dx = np.zeros(x.shape, dtype=np.float64)
    for r, roi in enumerate(rois):
        ys, xs, gh, gw = _align_geometry(roi, attrs, h, w)
        g = np.repeat(np.repeat(dout[r], gh, axis=1), gw, axis=2) / (gh * gw)  # [c, Sy, Sx]
        for yi, xi, wt in _align_terms(ys, xs):
            idx = (yi[:, None] * w + xi[None, :]).reshape(-1)
            flat = dx[img[r]].reshape(c, h * w)
            np.add.at(flat, (slice(None), idx), (g * wt).reshape(c, -1))
            dx[img[r]] = flat.reshape(c, h, w)
    return {"X@GRAD": dx.astype(x.dtype)}


def _round(v: float) -> int:
    """C's round(): halves away from zero."""
    return int(math.floor(abs(v) + 0.5)) * (1 if v >= 0 else -1)


def _bins(start: int, length: float, pooled: int, size: int) -> list:
    b = length / pooled
    return [
        (
            min(max(math.floor(i * b) + start, 0), size),
            min(max(math.ceil((i + 1) * b) + start, 0), size),
        )
        for i in range(pooled)
    ]


@kernel("roi_pool", FLOATS, lod=True, generic=False)
def roi_pool(inputs, attrs):
    x = array_of(inputs["X"])
    n, c, h, w = x.shape
    rois = array_of(inputs["ROIs"])
    img = roi_images(inputs, n, "roi_pool")
    ph, pw, scale = attrs["pooled_height"], attrs["pooled_width"], attrs["spatial_scale"]
    out = np.zeros((len(rois), c, ph, pw), dtype=x.dtype)
    arg = np.full((len(rois), c, ph, pw), -1, dtype=np.int64)
    for r, roi in enumerate(rois):
        x1, y1, x2, y2 = (_round(float(v) * scale) for v in roi)
        fm = x[img[r]].reshape(c, h * w)
        for i, (hs, he) in enumerate(_bins(y1, max(y2 - y1 + 1, 1), ph, h)):
            for j, (ws, we) in enumerate(_bins(x1, max(x2 - x1 + 1, 1), pw, w)):
                if he <= hs or we <= ws:
                    continue
                idx = (np.arange(hs, he)[:, None] * w + np.arange(ws, we)[None, :]).reshape(-1)
                win = fm[:, idx]
                best = win.argmax(axis=1)
                out[r, :, i, j] = win[np.arange(c), best]
                arg[r, :, i, j] = idx[best]
    return {"Out": out, "Argmax": arg}


@kernel("roi_pool_grad", FLOATS, lod=True, generic=False)
def roi_pool_grad(inputs, attrs):
    x = array_of(inputs["X"])
    n, c, h, w = x.shape
    img = roi_images(inputs, n, "roi_pool")
    arg = array_of(inputs["Argmax"])
    dout = array_of(inputs["Out@GRAD"])
    dx = np.zeros((n, c, h * w), dtype=x.dtype)
    r_idx, c_idx = np.nonzero(np.ones(arg.shape[:2], bool))
    for r, ch in zip(r_idx, c_idx):
        a = arg[r, ch].reshape(-1)
        keep = a >= 0
        np.add.at(dx[img[r], ch], a[keep], dout[r, ch].reshape(-1)[keep])
    return {"X@GRAD": dx.reshape(x.shape)}


def _ps_windows(roi, attrs, h, w):
    """[(hs, he)] and [(ws, we)] of the position-sensitive bins of one ROI."""
    scale = attrs["spatial_scale"]
    ph, pw = attrs["pooled_height"], attrs["pooled_width"]
    x1, y1 = _round(float(roi[0])) * scale, _round(float(roi[1])) * scale
    x2, y2 = (_round(float(roi[2])) + 1) * scale, (_round(float(roi[3])) + 1) * scale
    bh, bw = max(y2 - y1, 0.1) / ph, max(x2 - x1, 0.1) / pw

    def span(start, b, i, size):
        return min(max(math.floor(i * b + start), 0), size), min(
            max(math.ceil((i + 1) * b + start), 0), size
        )

    return [span(y1, bh, i, h) for i in range(ph)], [span(x1, bw, j, w) for j in range(pw)]


def _psroi(inputs, attrs, dout=None):
    x = array_of(inputs["X"])
    n, _, h, w = x.shape
    rois = array_of(inputs["ROIs"])
    img = roi_images(inputs, n, "psroi_pool")
    oc, ph, pw = attrs["output_channels"], attrs["pooled_height"], attrs["pooled_width"]
    res = np.zeros((len(rois), oc, ph, pw), dtype=x.dtype) if dout is None else np.zeros_like(x)
    chans = np.arange(oc) * ph * pw
    for r, roi in enumerate(rois):
        hb, wb = _ps_windows(roi, attrs, h, w)
        for i, (hs, he) in enumerate(hb):
            for j, (ws, we) in enumerate(wb):
                area = (he - hs) * (we - ws)
                if area <= 0:
                    continue
                ch = chans + i * pw + j
                if dout is None:
                    res[r, :, i, j] = x[img[r], ch, hs:he, ws:we].sum(axis=(1, 2)) / area
                else:
                    res[img[r], ch, hs:he, ws:we] += (dout[r, :, i, j] / area)[:, None, None]
    return res


@kernel("psroi_pool", FLOATS, lod=True, generic=False)
def psroi_pool(inputs, attrs):
    return {"Out": _psroi(inputs, attrs)}


@kernel("psroi_pool_grad", FLOATS, lod=True, generic=False)
def psroi_pool_grad(inputs, attrs):
    return {"X@GRAD": _psroi(inputs, attrs, array_of(inputs["Out@GRAD"]))}


def _tent_cdf(t):
    """The integral of max(0, 1 - |s|) from -inf to t."""
    t = np.clip(t, -1.0, 1.0)
    return np.where(t < 0, 0.5 * (t + 1) ** 2, 1.0 - 0.5 * (1 - t) ** 2)


def _pr_weights(start, b, pooled, size):
    """[pooled, size]: the integral over each bin of each grid point's bilinear tent."""
    lo = start + b * np.arange(pooled)
    grid = np.arange(size)
    return _tent_cdf(lo[:, None] + b - grid[None, :]) - _tent_cdf(lo[:, None] - grid[None, :])


def _prroi(inputs, attrs, dout=None):
    x = array_of(inputs["X"])
    n, c, h, w = x.shape
    rois = array_of(inputs["ROIs"])
    img = roi_images(inputs, n, "prroi_pool")
    ph, pw, scale = attrs["pooled_height"], attrs["pooled_width"], attrs["spatial_scale"]
    res = np.zeros((len(rois), c, ph, pw), dtype=x.dtype) if dout is None else np.zeros_like(x)
    for r, roi in enumerate(rois):
        x1, y1, x2, y2 = (float(v) * scale for v in roi)
        bh, bw = max(y2 - y1, 0.0) / ph, max(x2 - x1, 0.0) / pw
        area = bh * bw
        if area <= 0:
            continue
        ky, kx = _pr_weights(y1, bh, ph, h) / area, _pr_weights(x1, bw, pw, w)
        if dout is None:
            res[r] = np.einsum("ih,chw,jw->cij", ky, x[img[r]], kx)
        else:
            res[img[r]] += np.einsum("ih,cij,jw->chw", ky, dout[r], kx)
    return res


@kernel("prroi_pool", FLOATS, lod=True, generic=False)
def prroi_pool(inputs, attrs):
    return {"Out": _prroi(inputs, attrs)}


def _pr_weight_grads(start, b, pooled, size):
    """d ``_pr_weights`` / d start and / d end, where the bins span [start, end] evenly."""
    i = np.arange(pooled)[:, None]
    lo = start + b * i
    grid = np.arange(size)[None, :]
    hi_t = np.clip(1.0 - np.abs(lo + b - grid), 0.0, None)  # the tent: the CDF's slope
    lo_t = np.clip(1.0 - np.abs(lo - grid), 0.0, None)
    d_start = hi_t * (1.0 - (i + 1) / pooled) - lo_t * (1.0 - i / pooled)
    d_end = hi_t * ((i + 1) / pooled) - lo_t * (i / pooled)
    return d_start, d_end


def _prroi_rois_grad(inputs, attrs, dout):
    """[R, 4]: the derivative of sum(Out * dOut) for each ROI's x1, y1, x2, y2."""
    x = array_of(inputs["X"]).astype(np.float64)
    n, _, h, w = x.shape
    rois = array_of(inputs["ROIs"])
    img = roi_images(inputs, n, "prroi_pool")
    ph, pw, scale = attrs["pooled_height"], attrs["pooled_width"], attrs["spatial_scale"]
    grad = np.zeros(rois.shape, dtype=np.float64)
    for r, roi in enumerate(rois):
        x1, y1, x2, y2 = (float(v) * scale for v in roi)
        bh, bw = (y2 - y1) / ph, (x2 - x1) / pw
        if bh <= 0 or bw <= 0:
            continue
        area = bh * bw
        ky, kx = _pr_weights(y1, bh, ph, h), _pr_weights(x1, bw, pw, w)
        g = dout[r].astype(np.float64)
        m = np.einsum("cij,chw,jw->ih", g, x[img[r]], kx)  # d loss * area / d ky
        nx = np.einsum("cij,ih,chw->jw", g, ky, x[img[r]])  # d loss * area / d kx
        total = float((m * ky).sum()) / area
        dy1, dy2 = (float((m * d).sum()) / area for d in _pr_weight_grads(y1, bh, ph, h))
        dx1, dx2 = (float((nx * d).sum()) / area for d in _pr_weight_grads(x1, bw, pw, w))
        # the 1 / area normalisation: area shrinks as x1 or y1 grows
        grad[r] = [
            dx1 + total / (pw * bw),
            dy1 + total / (ph * bh),
            dx2 - total / (pw * bw),
            dy2 - total / (ph * bh),
        ]
    return (grad * scale).astype(rois.dtype)


@kernel("prroi_pool_grad", FLOATS, lod=True, generic=False, wants_outputs=True)
def prroi_pool_grad(inputs, attrs, wanted):
    dout = array_of(inputs["Out@GRAD"])
    res = {}
    if "X@GRAD" in wanted:
        res["X@GRAD"] = _prroi(inputs, attrs, dout)
    if "ROIs@GRAD" in wanted:
        res["ROIs@GRAD"] = _prroi_rois_grad(inputs, attrs, dout)
    return res


def perspective_matrix(quad, th: int, tw: int):
    """[9] row-major homography from output (col, row) to input (x, y) of one quadrilateral.

    The output width used is the quad's aspect (mean top/bottom over mean left/right edge
    lengths) times th - 1, rounded, plus 1, at most ``tw``; columns past it fall outside."""
    p = quad.reshape(4, 2).astype(np.float64)

    def edge(a, b):
        return float(np.hypot(*(p[a] - p[b])))

    est_w, est_h = (edge(0, 1) + edge(3, 2)) / 2, (edge(0, 3) + edge(1, 2)) / 2
    nw = min(int(math.floor(est_w * (th - 1) / max(est_h, 1e-12) + 0.5)) + 1, tw)
    src = [(0, 0), (nw - 1, 0), (nw - 1, th - 1), (0, th - 1)]
    a, b = [], []
    for (u, v), (x, y) in zip(src, p):
        a += [[u, v, 1, 0, 0, 0, -u * x, -v * x], [0, 0, 0, u, v, 1, -u * y, -v * y]]
        b += [x, y]
    try:
        m = np.linalg.solve(np.array(a, dtype=np.float64), np.array(b, dtype=np.float64))
    except np.linalg.LinAlgError:
        m = np.linalg.lstsq(
            np.array(a, dtype=np.float64), np.array(b, dtype=np.float64), rcond=None
        )[0]
    return np.append(m, 1.0)


def _in_quad(x, y, p):
    """Points (x, y) inside or on the convex quadrilateral p [4, 2]."""
    side = []
    for k in range(4):
        a, b = p[k], p[(k + 1) % 4]
        side.append((b[0] - a[0]) * (y - a[1]) - (b[1] - a[1]) * (x - a[0]))
    s = np.stack(side)
    return (s >= -1e-6).all(axis=0) | (s <= 1e-6).all(axis=0)


def _perspective_samples(inputs, attrs):
    """Per ROI: image, matrix, mask [th, tw] and the 4 bilinear (index, weight) terms."""
    x = array_of(inputs["X"])
    n, _, h, w = x.shape
    rois = array_of(inputs["ROIs"]).astype(np.float64) * attrs["spatial_scale"]
    img = roi_images(inputs, n, "roi_perspective_transform")
    th, tw = attrs["transformed_height"], attrs["transformed_width"]
    oh, ow = np.meshgrid(np.arange(th), np.arange(tw), indexing="ij")
    for r, quad in enumerate(rois):
        m = perspective_matrix(quad, th, tw)
        den = m[6] * ow + m[7] * oh + m[8]
        px, py = (m[0] * ow + m[1] * oh + m[2]) / den, (m[3] * ow + m[4] * oh + m[5]) / den
        mask = _in_quad(px, py, quad.reshape(4, 2))
        ok = mask & (px >= -0.5) & (px <= w - 0.5) & (py >= -0.5) & (py <= h - 0.5)
        cx, cy = np.clip(px, 0, w - 1), np.clip(py, 0, h - 1)
        x0, y0 = np.floor(cx).astype(np.int64), np.floor(cy).astype(np.int64)
        x1, y1 = np.minimum(x0 + 1, w - 1), np.minimum(y0 + 1, h - 1)
        lx, ly = cx - x0, cy - y0
        terms = [(y0 * w + x0, (1 - lx) * (1 - ly)), (y0 * w + x1, lx * (1 - ly)),
                 (y1 * w + x0, (1 - lx) * ly), (y1 * w + x1, lx * ly)]  # fmt: skip
        yield (
            r,
            img[r],
            m,
            mask,
            [(i.reshape(-1), np.where(ok, wt, 0.0).reshape(-1)) for i, wt in terms],
        )


@kernel("roi_perspective_transform", FLOATS, lod=True, generic=False)
def roi_perspective_transform(inputs, attrs):
    x = array_of(inputs["X"])
    n, c, h, w = x.shape
    r_count = array_of(inputs["ROIs"]).shape[0]
    th, tw = attrs["transformed_height"], attrs["transformed_width"]
    out = np.zeros((r_count, c, th * tw), dtype=np.float64)
    masks = np.zeros((r_count, 1, th, tw), dtype=np.int32)
    mats = np.zeros((r_count, 9), dtype=x.dtype)
    for r, im, m, mask, terms in _perspective_samples(inputs, attrs):
        fm = x[im].reshape(c, h * w).astype(np.float64)
        for idx, wt in terms:
            out[r] += fm[:, idx] * wt
        masks[r, 0] = mask
        mats[r] = m
    return {
        "Out": out.reshape(r_count, c, th, tw).astype(x.dtype),
        "Mask": masks,
        "TransformMatrix": mats,
    }


@kernel("roi_perspective_transform_grad", FLOATS, lod=True, generic=False)
def roi_perspective_transform_grad(inputs, attrs):
    x = array_of(inputs["X"])
    n, c, h, w = x.shape
    dout = array_of(inputs["Out@GRAD"]).astype(np.float64)
    dx = np.zeros((n, c, h * w))
    for r, im, _, _, terms in _perspective_samples(inputs, attrs):
        g = dout[r].reshape(c, -1)
        for idx, wt in terms:
            np.add.at(dx[im], (slice(None), idx), g * wt)
    return {"X@GRAD": dx.reshape(x.shape).astype(x.dtype)}
