"""numpy kernels of the normalisation ops: batch_norm, layer_norm, lrn.

batch_norm of a large batch runs in pieces of the batch on the kernel thread pool: per-channel
sums are added per piece in piece order (the same for every thread count).
"""

from __future__ import annotations

import math

import numpy as np
from oar.api import channel_axis

from oar_kernels_cpu.kernels import FLOATS, _parallel, _split, array_module, kernel
from oar_kernels_cpu.kernels._scratch import scratch

xp = array_module(__name__)

# --- batch_norm ---


def _ncl(a, attrs):
    """``a`` as (before the channel axis, C, after it): per-channel sums reduce axes 0 and 2."""
    c = channel_axis(a.ndim, attrs["data_layout"])
    before = math.prod(a.shape[:c])
    return a.reshape(before, a.shape[c], -1)


def _channel_sum(a3):
    """Per-channel sums of an (N, C, L) array: one matrix-vector product when L is long
    (faster than a strided reduction; sums the same numbers)."""
    if a3.shape[2] < 16:
        return a3.sum(axis=(0, 2))
    return xp.matmul(a3, xp.ones(a3.shape[2], a3.dtype)).sum(axis=0)


def _channel_dot(a3, b3):
    """Per-channel sums of ``a3 * b3`` without the product array."""
    if a3.dtype.itemsize < 4:  # float16: accumulate in float32
        a3, b3 = a3.astype(np.float32), b3.astype(np.float32)
    return xp.einsum("ncl,ncl->c", a3, b3)


def _global_stats(attrs) -> bool:
    return (attrs["is_test"] and not attrs["trainable_statistics"]) or attrs["use_global_stats"]


@kernel("batch_norm", FLOATS)
def batch_norm(inputs, attrs):
    x, scale, bias = inputs["X"], inputs["Scale"], inputs["Bias"]
    mean, var = inputs["Mean"], inputs["Variance"]
    eps = attrs["epsilon"]
    x3 = _ncl(x, attrs)
    cuts = _split.row_cuts(x3)  # pieces of the batch for the thread pool (one when small)
    y3 = xp.empty(x3.shape, x.dtype)
    if _global_stats(attrs):
        use_mean, inv_std = mean, 1.0 / xp.sqrt(var + xp.asarray(eps, var.dtype))
    else:
        count = x3.shape[0] * x3.shape[2]
        use_mean = _split.summed(lambda a, b: _channel_sum(x3[a:b]), cuts) / count
        centre = use_mean.reshape(1, -1, 1).astype(x.dtype)

        def centred_squares(a, b):  # y = x - mean (scaled in place below); sum of y*y
            xp.subtract(x3[a:b], centre, out=y3[a:b])
            return _channel_dot(y3[a:b], y3[a:b])

        batch_var = _split.summed(centred_squares, cuts) / count
        inv_std = 1.0 / xp.sqrt(batch_var + xp.asarray(eps, batch_var.dtype))
        m = (
            inputs["MomentumTensor"].reshape(-1)[0]
            if "MomentumTensor" in inputs
            else attrs["momentum"]
        )
        m = xp.asarray(m, mean.dtype)
        mean *= m
        mean += (1 - m) * use_mean.astype(mean.dtype)
        var *= m
        var += (1 - m) * batch_var.astype(var.dtype)
    k = (scale * inv_std).astype(x.dtype).reshape(1, -1, 1)
    if _global_stats(attrs):
        src, shift = x3, (bias - use_mean * k.reshape(-1)).astype(x.dtype)
    else:
        src, shift = y3, bias.astype(x.dtype)
    shift = shift.reshape(1, -1, 1)

    def scale_shift(a, b):
        xp.multiply(src[a:b], k, out=y3[a:b])
        y3[a:b] += shift

    _split_rows(scale_shift, cuts)
    return {
        "Y": y3.reshape(x.shape),
        "MeanOut": mean,
        "VarianceOut": var,
        "SavedMean": xp.array(use_mean, dtype=mean.dtype),
        "SavedVariance": inv_std.astype(mean.dtype),
    }


def _split_rows(fn, cuts):
    """``fn(start, stop)`` for every piece of the batch, on the pool (one call when one piece)."""
    _parallel.for_pieces(fn, cuts, blas=True)


@kernel("batch_norm_grad", FLOATS, wants_outputs=True)
def batch_norm_grad(inputs, attrs, wanted):
    x, scale, dy = inputs["X"], inputs["Scale"], inputs["Y@GRAD"]
    if _global_stats(attrs):
        mean = inputs["Mean"]
        inv_std = 1.0 / xp.sqrt(inputs["Variance"] + xp.asarray(attrs["epsilon"], x.dtype))
    else:
        mean, inv_std = inputs["SavedMean"], inputs["SavedVariance"]
    x3, dy3 = _ncl(x, attrs), _ncl(dy, attrs)
    cuts = _split.row_cuts(x3)

    def sums(a, b):  # per channel: sum(dy), sum(dy * x)
        return _channel_sum(dy3[a:b]), _channel_dot(dy3[a:b], x3[a:b])

    dbias, dyx = _split.summed(sums, cuts)
    # sum(dy * xhat) = (sum(dy * x) - mean * sum(dy)) * inv_std
    dscale = (dyx - mean.astype(dbias.dtype) * dbias) * inv_std.astype(dbias.dtype)
    res = {}
    if "Bias@GRAD" in wanted:
        res["Bias@GRAD"] = dbias.astype(scale.dtype)
    if "Scale@GRAD" in wanted:
        res["Scale@GRAD"] = dscale.astype(scale.dtype)
    if "X@GRAD" in wanted:
        k = (scale * inv_std).astype(x.dtype)
        dx3 = xp.empty(x3.shape, x.dtype)
        if _global_stats(attrs):
            k = k.reshape(1, -1, 1)
            _split_rows(lambda lo, hi: xp.multiply(dy3[lo:hi], k, out=dx3[lo:hi]), cuts)
        else:
            # dx = k * (dy - dbias/m - xhat * dscale/m) = k*dy + b*x + c, per channel
            m = x3.shape[0] * x3.shape[2]
            b = -k * (dscale * inv_std / m).astype(x.dtype)
            c = -k * (dbias / m).astype(x.dtype) - b * mean.astype(x.dtype)
            _split_rows(lambda lo, hi: _affine_dx(x3, dy3, dx3, k, b, c, lo, hi), cuts)
        res["X@GRAD"] = dx3.reshape(x.shape)
    return res


def _affine_dx(x3, dy3, dx3, k, b, c, lo, hi):
    """Rows ``lo:hi`` of dx = x*b + c + dy*k (per-channel b, c, k)."""
    k, b, c = (v.reshape(1, -1, 1) for v in (k, b, c))
    xp.multiply(x3[lo:hi], b, out=dx3[lo:hi])
    dx3[lo:hi] += c
    dx3[lo:hi] += xp.multiply(dy3[lo:hi], k, out=scratch(xp, "bn_dy", dy3[lo:hi].shape, dx3.dtype))


# --- layer_norm ---


def _rows(x, attrs):
    axis = attrs["begin_norm_axis"]
    left = math.prod(x.shape[:axis])
    return x.reshape(left, -1)


@kernel("layer_norm", FLOATS)
def layer_norm(inputs, attrs):
    x = inputs["X"]
    x2 = _rows(x, attrs)
    mean = x2.mean(axis=1)
    centred = x2 - mean[:, None]
    var = xp.square(centred).mean(axis=1)
    y = centred * (1.0 / xp.sqrt(var + xp.asarray(attrs["epsilon"], var.dtype)))[:, None]
    if "Scale" in inputs:
        y *= inputs["Scale"].reshape(1, -1)
    if "Bias" in inputs:
        y += inputs["Bias"].reshape(1, -1)
    return {"Y": y.reshape(x.shape), "Mean": mean, "Variance": var}


@kernel("layer_norm_grad", FLOATS, wants_outputs=True)
def layer_norm_grad(inputs, attrs, wanted):
    x, mean, var = inputs["X"], inputs["Mean"], inputs["Variance"]
    x2 = _rows(x, attrs)
    dy = inputs["Y@GRAD"].reshape(x2.shape)
    inv_std = (1.0 / xp.sqrt(var + xp.asarray(attrs["epsilon"], var.dtype)))[:, None]
    xhat = (x2 - mean[:, None]) * inv_std
    res = {}
    scale = inputs.get("Scale")
    if "Bias@GRAD" in wanted:
        res["Bias@GRAD"] = dy.sum(axis=0).reshape(
            inputs["Scale"].shape if scale is not None else (-1,)
        )
    if "Scale@GRAD" in wanted:
        res["Scale@GRAD"] = (dy * xhat).sum(axis=0).reshape(scale.shape)
    if "X@GRAD" in wanted:
        g = dy * scale.reshape(1, -1) if scale is not None else dy
        dx = g - g.mean(axis=1, keepdims=True) - xhat * (g * xhat).mean(axis=1, keepdims=True)
        dx *= inv_std
        res["X@GRAD"] = dx.reshape(x.shape)
    return res


# --- lrn ---


def _nchw(x, attrs):
    return x.transpose(0, 3, 1, 2) if attrs["data_format"] == "NHWC" else x


def _back(y, attrs):
    return xp.ascontiguousarray(y.transpose(0, 2, 3, 1)) if attrs["data_format"] == "NHWC" else y


def _window_sum(a, before, after):
    """out[:, c] = sum of a[:, c - before : c + after + 1] (clipped to the channel range)."""
    c = a.shape[1]
    cs = xp.zeros((a.shape[0], c + 1) + a.shape[2:], a.dtype)
    xp.cumsum(a, axis=1, out=cs[:, 1:])
    hi = xp.minimum(xp.arange(c) + after + 1, c)
    lo = xp.maximum(xp.arange(c) - before, 0)
    return cs[:, hi] - cs[:, lo]


@kernel("lrn", FLOATS)
def lrn(inputs, attrs):
    x = _nchw(inputs["X"], attrs)
    n = attrs["n"]
    pre = (n - 1) // 2
    mid = _window_sum(xp.square(x), pre, n - 1 - pre)
    mid *= xp.asarray(attrs["alpha"], x.dtype)
    mid += xp.asarray(attrs["k"], x.dtype)
    out = x * xp.power(mid, xp.asarray(-attrs["beta"], x.dtype))
    return {"Out": _back(out, attrs), "MidOut": _back(mid, attrs)}


@kernel("lrn_grad", FLOATS)
def lrn_grad(inputs, attrs):
    x, out, mid = (_nchw(inputs[s], attrs) for s in ("X", "Out", "MidOut"))
    dy = _nchw(inputs["Out@GRAD"], attrs)
    n, beta = attrs["n"], attrs["beta"]
    pre = (n - 1) // 2
    # channel i appears in the windows of channels i - (n-1-pre) .. i + pre
    t = _window_sum(dy * out / mid, n - 1 - pre, pre)
    dx = (
        dy * xp.power(mid, xp.asarray(-beta, x.dtype))
        - xp.asarray(2 * attrs["alpha"] * beta, x.dtype) * x * t
    )
    return {"X@GRAD": _back(dx, attrs)}
