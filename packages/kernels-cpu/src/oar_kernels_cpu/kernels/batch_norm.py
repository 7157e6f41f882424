"""numpy kernels for batch_norm: per-channel statistics, moving averages updated in place."""

from __future__ import annotations

import numpy as np
from oar.ops.batch_norm import channel_axis

from oar_kernels_cpu.kernels import FLOATS, kernel


def _axes(x, attrs):
    """(reduction axes, broadcast shape of a per-channel vector)."""
    c = channel_axis(x.ndim, attrs["data_layout"])
    shape = [1] * x.ndim
    shape[c] = x.shape[c]
    return tuple(i for i in range(x.ndim) if i != c), tuple(shape)


def _global_stats(attrs) -> bool:
    return (attrs["is_test"] and not attrs["trainable_statistics"]) or attrs["use_global_stats"]


@kernel("batch_norm", FLOATS)
def batch_norm(inputs, attrs):
    x, scale, bias = inputs["X"], inputs["Scale"], inputs["Bias"]
    mean, var = inputs["Mean"], inputs["Variance"]
    axes, bshape = _axes(x, attrs)
    eps = attrs["epsilon"]
    if _global_stats(attrs):
        use_mean, inv_std = mean, 1.0 / np.sqrt(var + np.asarray(eps, var.dtype))
    else:
        use_mean = x.mean(axis=axes)
        centred = x - use_mean.reshape(bshape)
        batch_var = np.square(centred).mean(axis=axes)
        inv_std = 1.0 / np.sqrt(batch_var + np.asarray(eps, batch_var.dtype))
        m = (
            inputs["MomentumTensor"].reshape(-1)[0]
            if "MomentumTensor" in inputs
            else attrs["momentum"]
        )
        m = np.asarray(m, mean.dtype)
        mean *= m
        mean += (1 - m) * use_mean.astype(mean.dtype)
        var *= m
        var += (1 - m) * batch_var.astype(var.dtype)
    k = (scale * inv_std).astype(x.dtype)
    shift = (bias - use_mean * k).astype(x.dtype)
    y = x * k.reshape(bshape)
    y += shift.reshape(bshape)
    return {
        "Y": y,
        "MeanOut": mean,
        "VarianceOut": var,
        "SavedMean": np.array(use_mean, dtype=mean.dtype),
        "SavedVariance": inv_std.astype(mean.dtype),
    }


@kernel("batch_norm_grad", FLOATS, wants_outputs=True)
def batch_norm_grad(inputs, attrs, wanted):
    x, scale, dy = inputs["X"], inputs["Scale"], inputs["Y@GRAD"]
    axes, bshape = _axes(x, attrs)
    if _global_stats(attrs):
        mean = inputs["Mean"]
        inv_std = 1.0 / np.sqrt(inputs["Variance"] + np.asarray(attrs["epsilon"], x.dtype))
    else:
        mean, inv_std = inputs["SavedMean"], inputs["SavedVariance"]
    xhat = (x - mean.reshape(bshape).astype(x.dtype)) * inv_std.reshape(bshape).astype(x.dtype)
    dbias = dy.sum(axis=axes)
    dscale = (dy * xhat).sum(axis=axes)
    res = {}
    if "Bias@GRAD" in wanted:
        res["Bias@GRAD"] = dbias.astype(scale.dtype)
    if "Scale@GRAD" in wanted:
        res["Scale@GRAD"] = dscale.astype(scale.dtype)
    if "X@GRAD" in wanted:
        k = (scale * inv_std).astype(x.dtype).reshape(bshape)
        if _global_stats(attrs):
            res["X@GRAD"] = dy * k
        else:
            m = x.size // x.shape[channel_axis(x.ndim, attrs["data_layout"])]
            dx = dy - (dbias / m).reshape(bshape).astype(x.dtype)
            dx -= xhat * (dscale / m).reshape(bshape).astype(x.dtype)
            dx *= k
            res["X@GRAD"] = dx
    return res
