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


def _parts(c, g):
    """The runs of equal-size groups as (first channel, end channel, first group, groups).

    As in Fluid 1.8.5, a group holds ceil(C / g) channels: when g does not divide C, the last
    non-empty group is smaller and any groups after it are empty (statistics 0)."""
    size = -(-c // g)
    full = c // size
    parts = [(0, full * size, 0, full)]
    if full * size < c:
        parts.append((full * size, c, full, 1))
    return parts


def _join(pieces, axis=1):
    return pieces[0] if len(pieces) == 1 else xp.concatenate(pieces, axis=axis)


def _forward(x, g, scale, bias, eps):
    """x channels-first (N, C, ...): normalised over (C/g, ...) per (sample, group)."""
    n, c = x.shape[:2]
    ys, stats = [], []
    for c0, c1, _, k in _parts(c, g):
        part = x[:, c0:c1]
        xg = part.reshape(n, k, -1)
        mean, var, rstd = _stats(xg, eps)
        ys.append(((xg - mean[..., None]) * rstd[..., None]).reshape(part.shape))
        stats.append((mean, var, rstd))
    empty = g - sum(s[0].shape[1] for s in stats)
    if empty:
        zero = xp.zeros((n, empty), stats[0][0].dtype)
        stats.append((zero, zero, zero))
    mean, var, rstd = (_join([s[i] for s in stats]) for i in range(3))
    y = _join(ys)
    if scale is not None:
        y = y * scale.reshape(_affine_shape(x))
    if bias is not None:
        y = y + bias.reshape(_affine_shape(x))
    return y.astype(x.dtype, copy=False), mean, var, rstd


def _backward(x, g, scale, mean, rstd, dy, wanted_scale, wanted_bias):
    n = x.shape[0]
    dxhat = dy if scale is None else dy * scale.reshape(_affine_shape(x))
    xhats, dxs = [], []
    for c0, c1, g0, k in _parts(x.shape[1], g):
        part = x[:, c0:c1]
        m, r = mean[:, g0 : g0 + k, None], rstd[:, g0 : g0 + k, None]
        xhat = (part.reshape(n, k, -1) - m) * r
        dxg = dxhat[:, c0:c1].reshape(n, k, -1)
        dx = r * (
            dxg
            - dxg.mean(axis=-1, keepdims=True)
            - xhat * (dxg * xhat).mean(axis=-1, keepdims=True)
        )
        xhats.append(xhat.reshape(part.shape))
        dxs.append(dx.reshape(part.shape))
    out = {"X@GRAD": _join(dxs).astype(x.dtype, copy=False)}
    red = (0,) + tuple(range(2, x.ndim))
    if wanted_scale:
        out["Scale@GRAD"] = (dy * _join(xhats)).sum(axis=red).astype(x.dtype, copy=False)
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
