"""batch_norm (training and inference) and its gradient: each channel's statistics in one pass.

``X`` is viewed as ``(outer, C, inner)`` (NCHW: N, C, H*W; NHWC: N*H*W, C, 1); channels
run in parallel, each summed on one thread (float64, vectorised with
``fastmath={"reassoc"}``), so the statistics do not depend on the thread count; they differ from numpy's float32 pairwise means in the last
bits (float tolerance). The per-channel vectors (running statistics, ``k = scale /
std``, the shift) are the numpy kernel's expressions on C-length arrays, and
``y = x * k + shift`` is its float operations. The gradient sums ``dy`` and ``dy *
xhat`` per channel and writes ``dx`` in the same pass over the channel.
"""

from __future__ import annotations

import numpy as np
from oar.api import channel_axis

from oar_kernels_numba._fallback import Fallback
from oar_kernels_numba._jit import SMALL, loop, prange

DTYPES = ("float32", "float64")
FLOAT_DTYPES = frozenset(np.dtype(t) for t in DTYPES)  # dtype.name costs ~1 µs a call


@loop(fastmath={"reassoc"})  # a channel never spans threads
def _stats(x, mean, var):
    """Per-channel mean and (biased) variance of x (outer, C, inner), float64 sums."""
    outer, nc, inner = x.shape
    cnt = outer * inner
    for c in prange(nc):
        s = 0.0
        for o in range(outer):
            for i in range(inner):
                s += x[o, c, i]
        m = s / cnt
        q = 0.0
        for o in range(outer):
            for i in range(inner):
                d = x[o, c, i] - m
                q += d * d
        mean[c] = m
        var[c] = q / cnt


@loop
def _apply(x, k, shift, y):
    outer, nc, inner = x.shape
    for o in prange(outer):
        for c in range(nc):
            kc, sc = k[c], shift[c]
            for i in range(inner):
                y[o, c, i] = x[o, c, i] * kc + sc


@loop(fastmath={"reassoc"})  # a channel never spans threads
def _grad(x, dy, mean, inv, k, batch, dbias, dscale, dx):
    """Per channel: dbias, dscale (float64 sums) and, when dx has rows, dx."""
    outer, nc, inner = x.shape
    cnt = outer * inner
    for c in prange(nc):
        mc, ic = mean[c], inv[c]
        sb = 0.0
        ss = 0.0
        for o in range(outer):
            for i in range(inner):
                g = dy[o, c, i]
                sb += g
                ss += g * ((x[o, c, i] - mc) * ic)
        dbias[c] = sb
        dscale[c] = ss
        if dx.shape[0] == 0:
            continue
        kc = k[c]
        if batch:
            mb = dx.dtype.type(sb / cnt)
            ms = dx.dtype.type(ss / cnt)
            for o in range(outer):
                for i in range(inner):
                    xh = (x[o, c, i] - mc) * ic
                    dx[o, c, i] = (dy[o, c, i] - mb - xh * ms) * kc
        else:
            for o in range(outer):
                for i in range(inner):
                    dx[o, c, i] = dy[o, c, i] * kc


def _global_stats(attrs) -> bool:
    return (attrs["is_test"] and not attrs["trainable_statistics"]) or attrs["use_global_stats"]


def _view(x, attrs):
    """x as a C-contiguous (outer, C, inner) view, or None when this kernel does not apply."""
    if type(x) is not np.ndarray or x.dtype not in FLOAT_DTYPES or x.size < SMALL:
        return None
    if not 2 <= x.ndim <= 5 or not x.flags.c_contiguous:
        return None
    c = channel_axis(x.ndim, attrs["data_layout"])
    outer = int(np.prod(x.shape[:c], dtype=np.int64))
    return x.reshape(outer, x.shape[c], -1)


def _vectors(inputs, n, *slots):
    vs = [inputs.get(s) for s in slots]
    if all(type(v) is np.ndarray and v.size == n and v.ndim == 1 for v in vs):
        return vs
    return None


class _Kernels:
    def __init__(self, device: str, priority: int) -> None:
        self.fb = {op: Fallback(op, device, priority) for op in ("batch_norm", "batch_norm_grad")}

    def batch_norm(self, inputs, attrs):
        x = inputs["X"]
        x3 = _view(x, attrs)
        vs = (
            None
            if x3 is None
            else _vectors(inputs, x3.shape[1], "Scale", "Bias", "Mean", "Variance")
        )
        if vs is None:
            return self.fb["batch_norm"](x.dtype, inputs, attrs)
        scale, bias, mean, var = vs
        eps = attrs["epsilon"]
        if _global_stats(attrs):
            use_mean, inv_std = mean, 1.0 / np.sqrt(var + np.asarray(eps, var.dtype))
        else:  # the numpy kernel's vector expressions, on the compiled statistics
            use_mean = np.empty(x3.shape[1], x.dtype)
            batch_var = np.empty(x3.shape[1], x.dtype)
            _stats(x.size, x3, use_mean, batch_var)
            inv_std = 1.0 / np.sqrt(batch_var + np.asarray(eps, batch_var.dtype))
            m = inputs["MomentumTensor"].reshape(-1)[0] if "MomentumTensor" in inputs else None
            m = np.asarray(attrs["momentum"] if m is None else m, mean.dtype)
            mean *= m
            mean += (1 - m) * use_mean.astype(mean.dtype)
            var *= m
            var += (1 - m) * batch_var.astype(var.dtype)
        k = (scale * inv_std).astype(x.dtype)
        shift = (bias - use_mean * k).astype(x.dtype)
        y = np.empty_like(x)
        _apply(x.size, x3, k, shift, y.reshape(x3.shape))
        return {
            "Y": y,
            "MeanOut": mean,
            "VarianceOut": var,
            "SavedMean": np.array(use_mean, dtype=mean.dtype),
            "SavedVariance": inv_std.astype(mean.dtype),
        }

    def batch_norm_grad(self, inputs, attrs, wanted):
        x, dy = inputs["X"], inputs["Y@GRAD"]
        x3 = _view(x, attrs)
        glob = _global_stats(attrs)
        slots = ("Scale", "Mean", "Variance") if glob else ("Scale", "SavedMean", "SavedVariance")
        vs = None if x3 is None else _vectors(inputs, x3.shape[1], *slots)
        ok = vs is not None and type(dy) is np.ndarray and dy.dtype == x.dtype
        if not ok or dy.shape != x.shape or not dy.flags.c_contiguous:
            return self.fb["batch_norm_grad"](x.dtype, inputs, attrs, wanted)
        scale, mean, inv_std = vs
        if glob:
            inv_std = 1.0 / np.sqrt(inv_std + np.asarray(attrs["epsilon"], x.dtype))
        t = x.dtype
        mean_x, inv_x = mean.astype(t), inv_std.astype(t)
        k = (scale * inv_std).astype(t)
        nc = x3.shape[1]
        dbias, dscale = np.empty(nc), np.empty(nc)
        dx = np.empty_like(x) if "X@GRAD" in wanted else np.empty((0, nc, 1), t)
        dx3 = dx.reshape(x3.shape) if dx.size else dx
        _grad(x.size, x3, dy.reshape(x3.shape), mean_x, inv_x, k, not glob, dbias, dscale, dx3)
        res = {}
        if "Bias@GRAD" in wanted:
            res["Bias@GRAD"] = dbias.astype(scale.dtype)
        if "Scale@GRAD" in wanted:
            res["Scale@GRAD"] = dscale.astype(scale.dtype)
        if "X@GRAD" in wanted:
            res["X@GRAD"] = dx
        return res


def register(registry, family: str, device: str, priority: int) -> None:
    k = _Kernels(device, priority)
    registry.register_kernel("batch_norm", device, DTYPES, k.batch_norm, priority)
    registry.register_kernel(
        "batch_norm_grad", device, DTYPES, k.batch_norm_grad, priority, wants_outputs=True
    )
