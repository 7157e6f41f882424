"""affine_grid and grid_sampler (bilinear, zero padding, corners at the outer pixel centres)."""

from __future__ import annotations

from oar_kernels_cpu.kernels import FLOATS, array_module, kernel
from oar_kernels_cpu.kernels._util import scatter_add

xp = array_module(__name__)


def _hw(inputs, attrs):
    if "OutputShape" in inputs:
        shape = [int(v) for v in xp.asarray(inputs["OutputShape"]).reshape(-1)]
    else:
        shape = attrs["output_shape"]
    return shape[2], shape[3]


def _base(h, w, dtype):
    """(H, W, 3): [x, y, 1] at every output pixel."""
    ys = xp.linspace(-1.0, 1.0, h) if h > 1 else xp.zeros(1)
    xs = xp.linspace(-1.0, 1.0, w) if w > 1 else xp.zeros(1)
    base = xp.ones((h, w, 3), dtype)
    base[..., 0] = xs[None, :]
    base[..., 1] = ys[:, None]
    return base


@kernel("affine_grid", FLOATS)
def affine_grid(inputs, attrs):
    theta = inputs["Theta"]
    base = _base(*_hw(inputs, attrs), theta.dtype)
    return {"Output": xp.einsum("hwj,nij->nhwi", base, theta)}


@kernel("affine_grid_grad", FLOATS)
def affine_grid_grad(inputs, attrs):
    theta, d = inputs["Theta"], inputs["Output@GRAD"]
    base = _base(d.shape[1], d.shape[2], theta.dtype)
    return {"Theta@GRAD": xp.einsum("nhwi,hwj->nij", d, base)}


def _corners(x, grid):
    """Pixel coordinates, the four neighbours' values (N, Ho, Wo, C) and their weights."""
    n, c, h, w = x.shape
    ix = (grid[..., 0] + 1) * ((w - 1) / 2.0)
    iy = (grid[..., 1] + 1) * ((h - 1) / 2.0)
    x0, y0 = xp.floor(ix).astype("int64"), xp.floor(iy).astype("int64")
    wx1, wy1 = ix - x0, iy - y0
    nidx = xp.arange(n).reshape(n, 1, 1)
    xt = x.transpose(0, 2, 3, 1)  # (N, H, W, C)
    corners = {}
    for dy in (0, 1):
        for dx in (0, 1):
            yc, xc = y0 + dy, x0 + dx
            valid = (yc >= 0) & (yc < h) & (xc >= 0) & (xc < w)
            ycl, xcl = xp.clip(yc, 0, h - 1), xp.clip(xc, 0, w - 1)
            v = xt[nidx, ycl, xcl] * valid[..., None]
            corners[(dy, dx)] = (v, ycl, xcl, valid)
    return corners, wx1, wy1, nidx


def _weight(dy, dx, wx1, wy1):
    return (wy1 if dy else 1 - wy1) * (wx1 if dx else 1 - wx1)


@kernel("grid_sampler", FLOATS)
def grid_sampler(inputs, attrs):
    x, grid = inputs["X"], inputs["Grid"]
    corners, wx1, wy1, _ = _corners(x, grid)
    out = sum(v * _weight(dy, dx, wx1, wy1)[..., None] for (dy, dx), (v, *_r) in corners.items())
    return {"Output": xp.ascontiguousarray(out.transpose(0, 3, 1, 2)).astype(x.dtype, copy=False)}


@kernel("grid_sampler_grad", FLOATS, wants_outputs=True)
def grid_sampler_grad(inputs, attrs, wanted):
    x, grid, d = inputs["X"], inputs["Grid"], inputs["Output@GRAD"]
    n, c, h, w = x.shape
    corners, wx1, wy1, nidx = _corners(x, grid)
    dt = d.transpose(0, 2, 3, 1)  # (N, Ho, Wo, C)
    res = {}
    if "X@GRAD" in wanted:
        gx = xp.zeros((n, h, w, c), x.dtype)
        for (dy, dx), (_, ycl, xcl, valid) in corners.items():
            wgt = (_weight(dy, dx, wx1, wy1) * valid)[..., None]
            scatter_add(xp, gx, (xp.broadcast_to(nidx, ycl.shape), ycl, xcl), dt * wgt)
        res["X@GRAD"] = xp.ascontiguousarray(gx.transpose(0, 3, 1, 2))
    if "Grid@GRAD" in wanted:
        v = {k: val[0] for k, val in corners.items()}
        dix = (v[(0, 1)] - v[(0, 0)]) * (1 - wy1)[..., None] + (v[(1, 1)] - v[(1, 0)]) * wy1[
            ..., None
        ]
        diy = (v[(1, 0)] - v[(0, 0)]) * (1 - wx1)[..., None] + (v[(1, 1)] - v[(0, 1)]) * wx1[
            ..., None
        ]
        gg = xp.stack(
            [(dix * dt).sum(axis=-1) * ((w - 1) / 2.0), (diy * dt).sum(axis=-1) * ((h - 1) / 2.0)],
            axis=-1,
        )
        res["Grid@GRAD"] = gg.astype(grid.dtype, copy=False)
    return res
