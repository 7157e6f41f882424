"""numpy kernels for lrn: window sums across channels through a cumulative sum (no channel loop)."""

from __future__ import annotations

import numpy as np

from oar_kernels_cpu.kernels import FLOATS, kernel


def _nchw(x, attrs):
    return x.transpose(0, 3, 1, 2) if attrs["data_format"] == "NHWC" else x


def _back(y, attrs):
    return np.ascontiguousarray(y.transpose(0, 2, 3, 1)) if attrs["data_format"] == "NHWC" else y


def _window_sum(a, before, after):
    """out[:, c] = sum of a[:, c - before : c + after + 1] (clipped to the channel range)."""
    c = a.shape[1]
    cs = np.zeros((a.shape[0], c + 1) + a.shape[2:], a.dtype)
    np.cumsum(a, axis=1, out=cs[:, 1:])
    hi = np.minimum(np.arange(c) + after + 1, c)
    lo = np.maximum(np.arange(c) - before, 0)
    return cs[:, hi] - cs[:, lo]


@kernel("lrn", FLOATS)
def lrn(inputs, attrs):
    x = _nchw(inputs["X"], attrs)
    n = attrs["n"]
    pre = (n - 1) // 2
    mid = _window_sum(np.square(x), pre, n - 1 - pre)
    mid *= np.asarray(attrs["alpha"], x.dtype)
    mid += np.asarray(attrs["k"], x.dtype)
    out = x * np.power(mid, np.asarray(-attrs["beta"], x.dtype))
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
        dy * np.power(mid, np.asarray(-beta, x.dtype))
        - np.asarray(2 * attrs["alpha"] * beta, x.dtype) * x * t
    )
    return {"X@GRAD": _back(dx, attrs)}
