"""numpy kernels of the normalisation ops: batch_norm, layer_norm, lrn."""

from __future__ import annotations

import math

import numpy as np
from oar.api import channel_axis

from oar_kernels_cpu.kernels import FLOATS, array_module, kernel
from oar_kernels_cpu.kernels._scratch import scratch

xp = array_module(__name__)

# --- batch_norm ---


def _axes(x, attrs):
    """(reduction axes, broadcast shape of a per-channel vector)."""
    c = channel_axis(x.ndim, attrs["data_layout"])
    shape = [1] * x.ndim
    shape[c] = x.shape[c]
    return tuple(i for i in range(x.ndim) if i != c), tuple(shape)


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
    _, bshape = _axes(x, attrs)
    eps = attrs["epsilon"]
    if _global_stats(attrs):
        use_mean, inv_std = mean, 1.0 / xp.sqrt(var + xp.asarray(eps, var.dtype))
        y = None
    else:
        x3 = _ncl(x, attrs)
        count = x3.shape[0] * x3.shape[2]
        use_mean = _channel_sum(x3) / count
        y = x - use_mean.reshape(bshape).astype(x.dtype)  # centred, scaled in place below
        y3 = y.reshape(x3.shape)
        batch_var = _channel_dot(y3, y3) / count
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
    k = (scale * inv_std).astype(x.dtype)
    if y is None:
        y = x * k.reshape(bshape)
        y += (bias - use_mean * k).astype(x.dtype).reshape(bshape)
    else:
        y *= k.reshape(bshape)
        y += bias.astype(x.dtype).reshape(bshape)
    return {
        "Y": y,
        "MeanOut": mean,
        "VarianceOut": var,
        "SavedMean": xp.array(use_mean, dtype=mean.dtype),
        "SavedVariance": inv_std.astype(mean.dtype),
    }


@kernel("batch_norm_grad", FLOATS, wants_outputs=True)
def batch_norm_grad(inputs, attrs, wanted):
    x, scale, dy = inputs["X"], inputs["Scale"], inputs["Y@GRAD"]
    _, bshape = _axes(x, attrs)
    if _global_stats(attrs):
        mean = inputs["Mean"]
        inv_std = 1.0 / xp.sqrt(inputs["Variance"] + xp.asarray(attrs["epsilon"], x.dtype))
    else:
        mean, inv_std = inputs["SavedMean"], inputs["SavedVariance"]
    x3, dy3 = _ncl(x, attrs), _ncl(dy, attrs)
    dbias = _channel_sum(dy3)
    # sum(dy * xhat) = (sum(dy * x) - mean * sum(dy)) * inv_std
    dscale = (_channel_dot(dy3, x3) - mean.astype(dbias.dtype) * dbias) * inv_std.astype(
        dbias.dtype
    )
    res = {}
    if "Bias@GRAD" in wanted:
        res["Bias@GRAD"] = dbias.astype(scale.dtype)
    if "Scale@GRAD" in wanted:
        res["Scale@GRAD"] = dscale.astype(scale.dtype)
    if "X@GRAD" in wanted:
        k = (scale * inv_std).astype(x.dtype)
        if _global_stats(attrs):
            res["X@GRAD"] = dy * k.reshape(bshape)
        else:
            # dx = k * (dy - dbias/m - xhat * dscale/m) = k*dy + b*x + c, per channel
            m = x3.shape[0] * x3.shape[2]
            b = -k * (dscale * inv_std / m).astype(x.dtype)
            c = -k * (dbias / m).astype(x.dtype) - b * mean.astype(x.dtype)
            dx = x * b.reshape(bshape)
            dx += c.reshape(bshape)
            dx += xp.multiply(dy, k.reshape(bshape), out=scratch(xp, "bn_dy", dy.shape, dx.dtype))
            res["X@GRAD"] = dx
    return res


# --- layer_norm ---


def _rows(x, attrs):
    axis = attrs["begin_norm_axis"]
    left = int(xp.prod(x.shape[:axis], dtype=np.int64))
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
