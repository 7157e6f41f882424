"""Kernels of group_norm and instance_norm: statistics per (sample, group) in one pass."""

from __future__ import annotations

from oar_kernels_cpu.kernels import FLOATS, array_module, kernel

xp = array_module(__name__)


def _channels_first(x, layout):
    return xp.moveaxis(x, -1, 1) if layout == "NHWC" else x


def _channels_back(y, layout):
    return xp.ascontiguousarray(xp.moveaxis(y, 1, -1)) if layout == "NHWC" else y


def _stats(xg, eps):
    mean = xg.mean(axis=-1)
    var = xg.var(axis=-1)
    return mean, var, 1.0 / xp.sqrt(var + eps)


def _affine_shape(x):
    return (1, x.shape[1]) + (1,) * (x.ndim - 2)


def _forward(x, g, scale, bias, eps):
    """x channels-first (N, C, ...): normalised over (C/g, ...) per (sample, group)."""
    n = x.shape[0]
    xg = x.reshape(n, g, -1)
    mean, var, rstd = _stats(xg, eps)
    y = ((xg - mean[..., None]) * rstd[..., None]).reshape(x.shape)
    if scale is not None:
        y = y * scale.reshape(_affine_shape(x))
    if bias is not None:
        y = y + bias.reshape(_affine_shape(x))
    return y.astype(x.dtype, copy=False), mean, var, rstd


def _backward(x, g, scale, mean, rstd, dy, wanted_scale, wanted_bias):
    n, c = x.shape[:2]
    xg = x.reshape(n, g, -1)
    xhat = (xg - mean[..., None]) * rstd[..., None]
    dxhat = dy if scale is None else dy * scale.reshape(_affine_shape(x))
    dxg = dxhat.reshape(n, g, -1)
    dx = rstd[..., None] * (
        dxg - dxg.mean(axis=-1, keepdims=True) - xhat * (dxg * xhat).mean(axis=-1, keepdims=True)
    )
    out = {"X@GRAD": dx.reshape(x.shape).astype(x.dtype, copy=False)}
    red = (0,) + tuple(range(2, x.ndim))
    if wanted_scale:
        out["Scale@GRAD"] = (dy * xhat.reshape(x.shape)).sum(axis=red).astype(x.dtype, copy=False)
    if wanted_bias:
        out["Bias@GRAD"] = dy.sum(axis=red).astype(x.dtype, copy=False)
    return out


@kernel("group_norm", FLOATS)
def group_norm(inputs, attrs):
    layout = attrs["data_layout"]
    x = _channels_first(inputs["X"], layout)
    y, mean, var, _ = _forward(
        x, attrs["groups"], inputs.get("Scale"), inputs.get("Bias"), attrs["epsilon"]
    )
    return {
        "Y": _channels_back(y, layout),
        "Mean": mean,
        "Variance": var.astype(x.dtype, copy=False),
    }


@kernel("group_norm_grad", FLOATS, wants_outputs=True)
def group_norm_grad(inputs, attrs, wanted):
    layout = attrs["data_layout"]
    x = _channels_first(inputs["X"], layout)
    dy = _channels_first(inputs["Y@GRAD"], layout)
    rstd = 1.0 / xp.sqrt(inputs["Variance"] + attrs["epsilon"])
    out = _backward(
        x,
        attrs["groups"],
        inputs.get("Scale"),
        inputs["Mean"],
        rstd,
        dy,
        "Scale@GRAD" in wanted,
        "Bias@GRAD" in wanted,
    )
    out["X@GRAD"] = _channels_back(out["X@GRAD"], layout)
    return out


@kernel("instance_norm", FLOATS)
def instance_norm(inputs, attrs):
    x = inputs["X"]
    y, mean, _, rstd = _forward(
        x, x.shape[1], inputs.get("Scale"), inputs.get("Bias"), attrs["epsilon"]
    )
    return {
        "Y": y,
        "SavedMean": mean.reshape(-1),
        "SavedVariance": rstd.reshape(-1).astype(x.dtype, copy=False),
    }


@kernel("instance_norm_grad", FLOATS, wants_outputs=True)
def instance_norm_grad(inputs, attrs, wanted):
    x = inputs["X"]
    n, c = x.shape[:2]
    return _backward(
        x,
        c,
        inputs.get("Scale"),
        inputs["SavedMean"].reshape(n, c),
        inputs["SavedVariance"].reshape(n, c),
        inputs["Y@GRAD"],
        "Scale@GRAD" in wanted,
        "Bias@GRAD" in wanted,
    )
