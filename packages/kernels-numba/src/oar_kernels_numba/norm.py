"""layer_norm and its input gradient: two passes over each row instead of six numpy passes.

Rows (everything before ``begin_norm_axis`` flattened) run in parallel for large
inputs; each row's mean and variance are summed in order within the row, so the
result does not depend on the thread count (it differs from numpy's pairwise sums in
the last bits: within float tolerance). ``Scale@GRAD`` and ``Bias@GRAD`` are column
sums over rows and stay numpy reductions, as in the numpy kernel.
"""

from __future__ import annotations

import numpy as np

from oar_kernels_numba._fallback import Fallback
from oar_kernels_numba._jit import SMALL, loop, prange

DTYPES = ("float32", "float64")
FLOAT_DTYPES = frozenset(np.dtype(t) for t in DTYPES)  # dtype.name costs ~1 µs a call


# row sums may be reassociated (vectorised): still the same for any thread count, since a
# row never spans threads
@loop(fastmath={"reassoc"})
def _forward(x, scale, bias, has_scale, has_bias, eps, y, mean, var):
    n, d = x.shape
    for r in prange(n):
        s = 0.0
        for j in range(d):
            s += x[r, j]
        m = s / d
        q = 0.0
        for j in range(d):
            c = x[r, j] - m
            q += c * c
        v = q / d
        inv = 1.0 / np.sqrt(v + eps)
        for j in range(d):
            t = (x[r, j] - m) * inv
            if has_scale:
                t = t * scale[j]
            if has_bias:
                t = t + bias[j]
            y[r, j] = t
        mean[r] = m
        var[r] = v


@loop(fastmath={"reassoc"})
def _input_grad(x, dy, scale, has_scale, mean, var, eps, dx):
    n, d = x.shape
    for r in prange(n):
        inv = 1.0 / np.sqrt(var[r] + eps)
        m = mean[r]
        sg = 0.0
        sgx = 0.0
        for j in range(d):
            g = dy[r, j] * scale[j] if has_scale else dy[r, j]
            xhat = (x[r, j] - m) * inv
            sg += g
            sgx += g * xhat
        sg /= d
        sgx /= d
        for j in range(d):
            g = dy[r, j] * scale[j] if has_scale else dy[r, j]
            xhat = (x[r, j] - m) * inv
            dx[r, j] = (g - sg - xhat * sgx) * inv


def _rows(x, axis: int):
    if type(x) is not np.ndarray or x.dtype not in FLOAT_DTYPES or not 0 < axis < x.ndim:
        return None
    if x.size < SMALL or not x.flags.c_contiguous:
        return None
    return x.reshape(int(np.prod(x.shape[:axis], dtype=np.int64)), -1)


def _vector(v, d, dtype):
    """A per-column vector (Scale / Bias) as a contiguous (d,) array of ``dtype``, or None."""
    if v is None:
        return np.zeros(1, dtype), False
    if type(v) is not np.ndarray or v.size != d or v.dtype != dtype:
        return None, None
    return np.ascontiguousarray(v).reshape(d), True


class _Kernels:
    def __init__(self, device: str, priority: int) -> None:
        self.fb = {op: Fallback(op, device, priority) for op in ("layer_norm", "layer_norm_grad")}

    def layer_norm(self, inputs, attrs):
        x = inputs["X"]
        x2 = _rows(x, attrs["begin_norm_axis"])
        if x2 is not None:
            scale, has_scale = _vector(inputs.get("Scale"), x2.shape[1], x.dtype)
            bias, has_bias = _vector(inputs.get("Bias"), x2.shape[1], x.dtype)
        if x2 is None or has_scale is None or has_bias is None:
            return self.fb["layer_norm"](x.dtype, inputs, attrs)
        y = np.empty_like(x2)
        mean = np.empty(x2.shape[0], x.dtype)
        var = np.empty(x2.shape[0], x.dtype)
        eps = x.dtype.type(attrs["epsilon"])
        _forward(x.size, x2, scale, bias, has_scale, has_bias, eps, y, mean, var)
        return {"Y": y.reshape(x.shape), "Mean": mean, "Variance": var}

    def layer_norm_grad(self, inputs, attrs, wanted):
        x, mean, var, dy = inputs["X"], inputs["Mean"], inputs["Variance"], inputs["Y@GRAD"]
        x2 = _rows(x, attrs["begin_norm_axis"])
        ok = x2 is not None and "X@GRAD" in wanted
        if ok:
            scale, has_scale = _vector(inputs.get("Scale"), x2.shape[1], x.dtype)
            ok = (
                has_scale is not None
                and type(dy) is np.ndarray
                and dy.dtype == x.dtype
                and dy.size == x.size
                and mean.dtype == x.dtype
                and var.dtype == x.dtype
                and mean.size == x2.shape[0]
                and var.size == x2.shape[0]
            )
        if not ok:
            return self.fb["layer_norm_grad"](x.dtype, inputs, attrs, wanted)
        dy2 = np.ascontiguousarray(dy).reshape(x2.shape)
        m = np.ascontiguousarray(mean).reshape(-1)
        v = np.ascontiguousarray(var).reshape(-1)
        eps = x.dtype.type(attrs["epsilon"])
        dx = np.empty_like(x2)
        _input_grad(x.size, x2, dy2, scale, has_scale, m, v, eps, dx)
        res = {"X@GRAD": dx.reshape(x.shape)}
        others = wanted - {"X@GRAD"}
        if others:  # the column sums: the numpy kernel's
            res.update(self.fb["layer_norm_grad"](x.dtype, inputs, attrs, frozenset(others)))
        return res


def register(registry, family: str, device: str, priority: int) -> None:
    from oar_kernels_numba import batch_norm

    batch_norm.register(registry, family, device, priority)
    k = _Kernels(device, priority)
    registry.register_kernel("layer_norm", device, DTYPES, k.layer_norm, priority)
    registry.register_kernel(
        "layer_norm_grad", device, DTYPES, k.layer_norm_grad, priority, wants_outputs=True
    )
