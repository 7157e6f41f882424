"""Kernels of deformable_conv / deformable_conv_v1 (numpy only: scatter-adds in backward).

Forward: every tap of every output position samples the input bilinearly at its offset
position (one gather per corner for all channels of a deformable group), optionally scaled
by the mask, then one grouped contraction with the filter. Backward reuses the sampling
geometry: filter gradient by the same contraction, input gradient by scatter-adding through
the bilinear weights, offset gradient from the weights' derivatives.
"""

from __future__ import annotations

import numpy as np

from oar_kernels_cpu.kernels import FLOATS, kernel


def _geometry(x_shape, offset, w_shape, attrs):
    """Corner indices, weights and their h/w derivatives, each [N, dg, 4, K * L]."""
    n, c, h, w = x_shape
    _, _, kh, kw = w_shape
    dg = attrs["deformable_groups"]
    (sh, sw), (ph, pw), (dh, dw) = attrs["strides"], attrs["paddings"], attrs["dilations"]
    ho, wo = offset.shape[2:]
    k = kh * kw
    off = offset.astype(np.float64).reshape(n, dg, k, 2, ho, wo)
    ki, kj = np.divmod(np.arange(k), kw)
    py = (np.arange(ho)[None, :] * sh - ph + ki[:, None] * dh)[None, None, :, :, None] + off[
        :, :, :, 0
    ]
    px = (np.arange(wo)[None, :] * sw - pw + kj[:, None] * dw)[None, None, :, None, :] + off[
        :, :, :, 1
    ]
    inside = (py > -1) & (py < h) & (px > -1) & (px < w)
    y0, x0 = np.floor(py).astype(np.int64), np.floor(px).astype(np.int64)
    ly, lx = py - y0, px - x0
    idx, wt, dy, dx = [], [], [], []
    for oy, ox, a, b, gy, gx in (
        (0, 0, 1 - ly, 1 - lx, -(1 - lx), -(1 - ly)),
        (0, 1, 1 - ly, lx, -lx, 1 - ly),
        (1, 0, ly, 1 - lx, 1 - lx, -ly),
        (1, 1, ly, lx, lx, ly),
    ):
        yy, xx = y0 + oy, x0 + ox
        ok = inside & (yy >= 0) & (yy < h) & (xx >= 0) & (xx < w)
        idx.append((np.clip(yy, 0, h - 1) * w + np.clip(xx, 0, w - 1)).reshape(n, dg, -1))
        wt.append(np.where(ok, a * b, 0.0).reshape(n, dg, -1))
        dy.append(np.where(ok, gy, 0.0).reshape(n, dg, -1))
        dx.append(np.where(ok, gx, 0.0).reshape(n, dg, -1))
    return [np.stack(v, axis=2) for v in (idx, wt, dy, dx)], (k, ho * wo)


def _gather(xg, idx):
    """[N, dg, Cg, 4, K * L] input values at the corner indices."""
    return np.stack(
        [np.take_along_axis(xg, idx[:, :, None, j, :], axis=3) for j in range(4)], axis=3
    )


def _sample(inputs, attrs):
    x = inputs["Input"]
    n, c, h, w = x.shape
    dg = attrs["deformable_groups"]
    (idx, wt, dy, dx), (k, npos) = _geometry(
        x.shape, inputs["Offset"], inputs["Filter"].shape, attrs
    )
    corners = _gather(x.astype(np.float64).reshape(n, dg, c // dg, h * w), idx)
    val = (corners * wt[:, :, None]).sum(axis=3).reshape(n, dg, c // dg, k, npos)
    return val, corners, (idx, wt, dy, dx), (k, npos)


def _mask(inputs, k, npos):
    m = inputs.get("Mask")
    if m is None:
        return None
    n = m.shape[0]
    return m.astype(np.float64).reshape(n, -1, 1, k, npos)


def _grouped(filt, g, k):
    f, cg = filt.shape[:2]
    return filt.astype(np.float64).reshape(g, f // g, cg, k)


def _forward(inputs, attrs):
    x, filt = inputs["Input"], inputs["Filter"]
    n, c = x.shape[:2]
    g = attrs["groups"]
    val, _, _, (k, npos) = _sample(inputs, attrs)
    mask = _mask(inputs, k, npos)
    col = (val if mask is None else val * mask).reshape(n, g, c // g, k, npos)
    out = np.einsum("gfck,ngckl->ngfl", _grouped(filt, g, k), col)
    ho, wo = inputs["Offset"].shape[2:]
    return {"Output": out.reshape(n, filt.shape[0], ho, wo).astype(x.dtype)}


def _backward(inputs, attrs):
    x, filt = inputs["Input"], inputs["Filter"]
    n, c, h, w = x.shape
    g, dg = attrs["groups"], attrs["deformable_groups"]
    val, corners, (idx, wt, dy, dx), (k, npos) = _sample(inputs, attrs)
    mask = _mask(inputs, k, npos)
    col = (val if mask is None else val * mask).reshape(n, g, c // g, k, npos)
    dout = inputs["Output@GRAD"].astype(np.float64).reshape(n, g, filt.shape[0] // g, npos)
    wg = _grouped(filt, g, k)
    grads = {
        "Filter@GRAD": np.einsum("ngfl,ngckl->gfck", dout, col)
        .reshape(filt.shape)
        .astype(filt.dtype)
    }
    dcol = np.einsum("gfck,ngfl->ngckl", wg, dout).reshape(n, dg, c // dg, k, npos)
    if mask is not None:
        grads["Mask@GRAD"] = (dcol * val).sum(axis=2).reshape(inputs["Mask"].shape).astype(x.dtype)
        dcol = dcol * mask
    dval = dcol.reshape(n, dg, c // dg, 1, k * npos)
    dxg = np.zeros((n, dg, c // dg, h * w))
    contrib = dval * wt[:, :, None]
    for i in range(n):
        for j in range(dg):
            for q in range(4):
                np.add.at(dxg[i, j], (slice(None), idx[i, j, q]), contrib[i, j, :, q])
    grads["Input@GRAD"] = dxg.reshape(x.shape).astype(x.dtype)
    gy = (dval * corners * dy[:, :, None]).sum(axis=(2, 3)).reshape(n, dg, k, npos)
    gx = (dval * corners * dx[:, :, None]).sum(axis=(2, 3)).reshape(n, dg, k, npos)
    grads["Offset@GRAD"] = (
        np.stack([gy, gx], axis=3).reshape(inputs["Offset"].shape).astype(x.dtype)
    )
    return grads


@kernel("deformable_conv", FLOATS, generic=False)
def deformable_conv(inputs, attrs):
    return _forward(inputs, attrs)


@kernel("deformable_conv_v1", FLOATS, generic=False)
def deformable_conv_v1(inputs, attrs):
    return _forward(inputs, attrs)


@kernel("deformable_conv_grad", FLOATS, generic=False)
def deformable_conv_grad(inputs, attrs):
    return _backward(inputs, attrs)


@kernel("deformable_conv_v1_grad", FLOATS, generic=False)
def deformable_conv_v1_grad(inputs, attrs):
    return _backward(inputs, attrs)
