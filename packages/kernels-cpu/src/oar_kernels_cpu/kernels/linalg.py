"""Kernels of the linalg family: bmm, dot, cross, dist, kron, trace, addmm, diag_embed.

The matrix products go through :mod:`._gemm` (oar's thread settings, ``FLAGS_cpu_deterministic``)."""

from __future__ import annotations

from oar_kernels_cpu.kernels import FLOATS, _gemm, array_module, kernel
from oar_kernels_cpu.kernels._util import reduce_to

xp = array_module(__name__)
NUM = FLOATS + ("int32", "int64")
_CROSS_DEFAULT_DIM = -100  # oar.ops.linalg.CROSS_DEFAULT_DIM


@kernel("bmm", FLOATS)
def bmm(inputs, attrs):
    return {"Out": _gemm.matmul(xp, inputs["X"], inputs["Y"])}


@kernel("bmm_grad", FLOATS)
def bmm_grad(inputs, attrs):
    x, y, d = inputs["X"], inputs["Y"], inputs["Out@GRAD"]
    dx, dy = _gemm.matmuls(xp, [(d, xp.swapaxes(y, -1, -2)), (xp.swapaxes(x, -1, -2), d)])
    return {"X@GRAD": dx, "Y@GRAD": dy}


@kernel("dot", NUM)
def dot(inputs, attrs):
    x, y = inputs["X"], inputs["Y"]
    return {"Out": xp.sum(x * y, axis=-1, keepdims=True)}


@kernel("dot_grad", FLOATS)
def dot_grad(inputs, attrs):
    x, y, d = inputs["X"], inputs["Y"], inputs["Out@GRAD"]
    return {"X@GRAD": d * y, "Y@GRAD": d * x}


def _cross_axis(shape, dim):
    if dim == _CROSS_DEFAULT_DIM:
        return next(i for i, n in enumerate(shape) if n == 3)
    return dim % len(shape)


@kernel("cross", FLOATS)
def cross(inputs, attrs):
    x, y = inputs["X"], inputs["Y"]
    return {"Out": xp.cross(x, y, axis=_cross_axis(x.shape, attrs["dim"]))}


@kernel("cross_grad", FLOATS)
def cross_grad(inputs, attrs):
    x, y, d = inputs["X"], inputs["Y"], inputs["Out@GRAD"]
    axis = _cross_axis(x.shape, attrs["dim"])
    return {"X@GRAD": xp.cross(y, d, axis=axis), "Y@GRAD": xp.cross(d, x, axis=axis)}


def _norm(z, p):
    a = xp.abs(z)
    if p == 0:
        return xp.sum(a != 0).astype(z.dtype)
    if p == float("inf"):
        return xp.max(a)
    if p == float("-inf"):
        return xp.min(a)
    return xp.sum(a**p) ** (1.0 / p)


@kernel("dist", FLOATS)
def dist(inputs, attrs):
    z = inputs["X"] - inputs["Y"]
    return {"Out": xp.reshape(_norm(z, attrs["p"]), (1,)).astype(z.dtype, copy=False)}


@kernel("dist_grad", FLOATS)
def dist_grad(inputs, attrs):
    x, y, out, d = inputs["X"], inputs["Y"], inputs["Out"], inputs["Out@GRAD"]
    z, p, n = x - y, attrs["p"], out.reshape(())
    a = xp.abs(z)
    if p == 0:
        g = xp.zeros_like(z)
    elif p in (float("inf"), float("-inf")):
        g = xp.sign(z) * (a == n)
    elif p == 1:
        g = xp.sign(z)
    else:
        safe = xp.where(n > 0, n, 1)
        g = xp.where(n > 0, xp.sign(z) * a ** (p - 1) * safe ** (1 - p), 0)
    g = (g * d.reshape(())).astype(x.dtype, copy=False)
    return {"X@GRAD": reduce_to(g, x.shape), "Y@GRAD": reduce_to(-g, y.shape)}


def _kron_shapes(x, y):
    n = max(x.ndim, y.ndim)
    xs = (1,) * (n - x.ndim) + x.shape
    ys = (1,) * (n - y.ndim) + y.shape
    # interleaved (a1, b1, a2, b2, ...): out[a*B + b] = x[a] * y[b]
    xi = tuple(s for a in xs for s in (a, 1))
    yi = tuple(s for b in ys for s in (1, b))
    return xs, ys, xi, yi, n


@kernel("kron", NUM)
def kron(inputs, attrs):
    x, y = inputs["X"], inputs["Y"]
    xs, ys, xi, yi, _ = _kron_shapes(x, y)
    prod = x.reshape(xi) * y.reshape(yi)
    return {"Out": prod.reshape(tuple(a * b for a, b in zip(xs, ys)))}


@kernel("kron_grad", FLOATS)
def kron_grad(inputs, attrs):
    x, y, d = inputs["X"], inputs["Y"], inputs["Out@GRAD"]
    xs, ys, xi, yi, n = _kron_shapes(x, y)
    di = d.reshape(tuple(s for a, b in zip(xs, ys) for s in (a, b)))
    odd, even = tuple(range(1, 2 * n, 2)), tuple(range(0, 2 * n, 2))
    dx = xp.sum(di * y.reshape(yi), axis=odd).reshape(x.shape)
    dy = xp.sum(di * x.reshape(xi), axis=even).reshape(y.shape)
    return {"X@GRAD": dx, "Y@GRAD": dy}


def _diag_mask(shape, d1, d2, offset, dtype):
    mask = xp.eye(shape[d1], shape[d2], k=offset, dtype=dtype)
    full = [1] * len(shape)
    full[d1], full[d2] = shape[d1], shape[d2]
    if d1 > d2:
        mask = mask.T
    return mask.reshape(full)


@kernel("trace", NUM)
def trace(inputs, attrs):
    x = inputs["Input"]
    d1, d2 = attrs["dim1"] % x.ndim, attrs["dim2"] % x.ndim
    out = xp.trace(x, offset=attrs["offset"], axis1=d1, axis2=d2)
    return {"Out": xp.reshape(out, (1,)) if x.ndim == 2 else out}


@kernel("trace_grad", FLOATS)
def trace_grad(inputs, attrs):
    x, d = inputs["Input"], inputs["Out@GRAD"]
    d1, d2 = attrs["dim1"] % x.ndim, attrs["dim2"] % x.ndim
    lo, hi = sorted((d1, d2))
    dd = xp.expand_dims(xp.expand_dims(d.reshape(()) if x.ndim == 2 else d, lo), hi)
    return {"Input@GRAD": dd * _diag_mask(x.shape, d1, d2, attrs["offset"], x.dtype)}


@kernel("addmm", FLOATS)
def addmm(inputs, attrs):
    prod = _gemm.matmul(xp, inputs["X"], inputs["Y"])
    out = attrs["Beta"] * inputs["Input"] + attrs["Alpha"] * prod
    return {"Out": out.astype(prod.dtype, copy=False)}


@kernel("addmm_grad", FLOATS)
def addmm_grad(inputs, attrs):
    inp, x, y, d = inputs["Input"], inputs["X"], inputs["Y"], inputs["Out@GRAD"]
    a, b = attrs["Alpha"], attrs["Beta"]
    dx, dy = _gemm.matmuls(xp, [(d, y.T), (x.T, d)])
    return {
        "Input@GRAD": reduce_to(b * d, inp.shape).astype(inp.dtype, copy=False),
        "X@GRAD": (a * dx).astype(x.dtype, copy=False),
        "Y@GRAD": (a * dy).astype(y.dtype, copy=False),
    }


def _diag_index(n, offset):
    rows = xp.arange(n) + max(-offset, 0)
    cols = xp.arange(n) + max(offset, 0)
    return rows, cols


@kernel("diag_embed", NUM)
def diag_embed(inputs, attrs):
    x, offset = inputs["Input"], attrs["offset"]
    rank = x.ndim + 1
    d1, d2 = attrs["dim1"] % rank, attrs["dim2"] % rank
    n = x.shape[-1]
    m = n + abs(offset)
    tmp = xp.zeros(x.shape[:-1] + (m, m), x.dtype)
    rows, cols = _diag_index(n, offset)
    tmp[..., rows, cols] = x
    return {"Out": xp.moveaxis(tmp, (-2, -1), (d1, d2))}


@kernel("diag_embed_grad", FLOATS)
def diag_embed_grad(inputs, attrs):
    x, d, offset = inputs["Input"], inputs["Out@GRAD"], attrs["offset"]
    rank = x.ndim + 1
    d1, d2 = attrs["dim1"] % rank, attrs["dim2"] % rank
    tmp = xp.moveaxis(d, (d1, d2), (-2, -1))
    rows, cols = _diag_index(x.shape[-1], offset)
    return {"Input@GRAD": tmp[..., rows, cols]}
