"""Fused optimizer updates: one pass over parameter, gradient and state per update.

The numpy kernels take several passes (and a scratch array) per update; these loops
read each element once and do the same float operations in the same order with
the same dtype, so the results are bit for bit those of the numpy kernels.
"""

from __future__ import annotations

import math

import numpy as np
from oar.api import SelectedRows

from oar_kernels_numba._fallback import Fallback
from oar_kernels_numba._jit import SMALL, jit, loop, prange

#: elements below which adam goes to the numpy kernel: its ~10 numpy passes cost more than
#: one compiled call from a few hundred elements (a bias) on
ADAM_SMALL = min(SMALL, 256)

DTYPES = ("float32", "float64")
FLOAT_DTYPES = frozenset(np.dtype(t) for t in DTYPES)  # dtype.name costs ~1 µs a call


def _flat(*arrays):
    """1-D views of same-shape, same-dtype C-contiguous arrays, or None."""
    first = arrays[0]
    for a in arrays:
        if (
            type(a) is not np.ndarray
            or a.shape != first.shape
            or a.dtype != first.dtype
            or not a.flags.c_contiguous
        ):
            return None
    return [a.reshape(-1) for a in arrays]


@loop
def _sgd(p, g, lr):
    for i in prange(p.size):
        p[i] = p[i] - lr * g[i]


@jit
def _sgd_rows(p, rows, values, lr):
    for k in range(rows.size):  # in order, so repeated rows accumulate as np.subtract.at does
        r = rows[k]
        for j in range(p.shape[1]):
            p[r, j] = p[r, j] - lr * values[k, j]


@loop
def _momentum(p, g, v, lr, mu, nesterov):
    for i in prange(p.size):
        vi = v[i] * mu + g[i]
        v[i] = vi
        if nesterov:
            p[i] = p[i] - lr * (g[i] + mu * vi)
        else:
            p[i] = p[i] - lr * vi


@loop
def _adam(p, g, m1, m2, b1, b2, omb1, omb2, lr_t, eps):
    for i in prange(p.size):
        gi = g[i]
        m = m1[i] * b1 + gi * omb1
        v = m2[i] * b2 + gi * gi * omb2
        m1[i] = m
        m2[i] = v
        p[i] = p[i] - m / (np.sqrt(v) + eps) * lr_t


@jit
def _adam_rows(p, m1, m2, rows, gv, b1, b2, omb1, omb2, lr_t, eps):
    for k in range(rows.size):  # rows are unique (merged)
        r = rows[k]
        for j in range(p.shape[1]):
            gi = gv[k, j]  # the lazy numpy update's operation order
            m = b1 * m1[r, j] + omb1 * gi
            v = b2 * m2[r, j] + omb2 * gi * gi
            m1[r, j] = m
            m2[r, j] = v
            p[r, j] = p[r, j] - lr_t * m / (np.sqrt(v) + eps)


@jit
def _merge_rows(rows, values, order, out_rows, out_values):
    """Sum the values of equal rows (``order`` sorts ``rows``); returns the unique count."""
    u = -1
    last = -1
    for t in range(order.size):
        k = order[t]
        r = rows[k]
        if u < 0 or r != last:
            u += 1
            out_rows[u] = r
            last = r
            for j in range(values.shape[1]):
                out_values[u, j] = values[k, j]
        else:
            for j in range(values.shape[1]):
                out_values[u, j] += values[k, j]
    return u + 1


def merged(g: SelectedRows, dtype) -> tuple:
    """The unique rows of a SelectedRows gradient and their summed values (2-D)."""
    rows = np.asarray(g.row_array, dtype=np.int64).reshape(-1)
    values = np.ascontiguousarray(np.asarray(g.value, dtype=dtype))
    values = values.reshape(rows.size, -1)
    order = np.argsort(rows, kind="stable")
    out_rows = np.empty(rows.size, np.int64)
    out_values = np.empty_like(values)
    n = _merge_rows(rows, values, order, out_rows, out_values)
    return out_rows[:n], out_values[:n]


class _Kernels:
    def __init__(self, device: str, priority: int) -> None:
        self.fb = {op: Fallback(op, device, priority) for op in ("sgd", "momentum", "adam")}
        self._consts: dict = {}

    def sgd(self, inputs, attrs, donated=frozenset()):
        p, g = inputs["Param"], inputs["Grad"]
        if p.size < SMALL:  # numpy's call is cheaper than a compiled one's dispatch
            return self.fb["sgd"](p.dtype, inputs, attrs, donated=donated)
        lr = inputs["LearningRate"].reshape(-1)[0]
        if isinstance(g, SelectedRows):
            if (
                type(p) is np.ndarray
                and p.ndim == 2
                and p.flags.c_contiguous
                and p.dtype in FLOAT_DTYPES
            ):
                rows = np.asarray(g.row_array, dtype=np.int64).reshape(-1)
                values = np.ascontiguousarray(np.asarray(g.value, dtype=p.dtype))
                if values.size == rows.size * p.shape[1] and (
                    rows.size == 0 or (rows.min() >= 0 and rows.max() < p.shape[0])
                ):
                    _sgd_rows(p, rows, values.reshape(rows.size, -1), p.dtype.type(lr))
                    return {"ParamOut": p}
        elif p.size >= SMALL:
            flat = _flat(p, g)
            if flat is not None and p.dtype in FLOAT_DTYPES:
                _sgd(p.size, flat[0], flat[1], p.dtype.type(lr))
                return {"ParamOut": p}
        return self.fb["sgd"](p.dtype, inputs, attrs, donated=donated)

    def momentum(self, inputs, attrs):
        p, g, v = inputs["Param"], inputs["Grad"], inputs["Velocity"]
        if p.size < SMALL:
            return self.fb["momentum"](p.dtype, inputs, attrs)
        flat = _flat(p, g, v) if p.size >= SMALL else None
        if flat is None or p.dtype not in FLOAT_DTYPES:
            return self.fb["momentum"](p.dtype, inputs, attrs)
        t = p.dtype.type
        lr = float(inputs["LearningRate"].reshape(-1)[0])
        _momentum(p.size, *flat, t(lr), t(attrs["mu"]), bool(attrs["use_nesterov"]))
        return {"ParamOut": p, "VelocityOut": v}

    def _adam_consts(self, inputs, attrs, dtype):
        """(beta1, beta2, (b1, b2, 1 - b1, 1 - b2, eps) in ``dtype``): cached per attrs when
        the betas are attributes (tensors are read each call)."""
        t1, t2 = inputs.get("Beta1Tensor"), inputs.get("Beta2Tensor")
        key = (attrs["beta1"], attrs["beta2"], attrs["epsilon"], dtype)
        got = self._consts.get(key) if t1 is None and t2 is None else None
        if got is None:
            # Fluid keeps float attrs in float32 (see oar-kernels-cpu's adam): the same scalars
            b1 = float(np.float32(float(np.asarray(attrs["beta1"] if t1 is None else t1).flat[0])))
            b2 = float(np.float32(float(np.asarray(attrs["beta2"] if t2 is None else t2).flat[0])))
            t = dtype.type
            got = (b1, b2, (t(b1), t(b2), t(1 - b1), t(1 - b2), t(attrs["epsilon"])))
            if t1 is None and t2 is None:
                self._consts[key] = got
        return got

    def adam(self, inputs, attrs):
        p, g = inputs["Param"], inputs["Grad"]
        if p.size < ADAM_SMALL:  # one compiled pass beats numpy's ~10 even on small arrays
            return self.fb["adam"](p.dtype, inputs, attrs)
        m1, m2 = inputs["Moment1"], inputs["Moment2"]
        b1p, b2p = inputs["Beta1Pow"], inputs["Beta2Pow"]
        sparse = isinstance(g, SelectedRows) and attrs["lazy_mode"]
        flat = None
        if sparse:
            ok = _flat(p, m1, m2) is not None and p.ndim == 2 and p.dtype in FLOAT_DTYPES
        else:
            ok = not isinstance(g, SelectedRows)
            flat = _flat(p, g, m1, m2) if ok else None  # checked once, passed on below
            ok = flat is not None and p.dtype in FLOAT_DTYPES
        if not ok:
            return self.fb["adam"](p.dtype, inputs, attrs)
        b1, b2, consts = self._adam_consts(inputs, attrs, p.dtype)
        lr = float(inputs["LearningRate"].reshape(-1)[0])
        b1pow, b2pow = float(b1p.reshape(-1)[0]), float(b2p.reshape(-1)[0])
        lr_t = lr * math.sqrt(1 - b2pow) / (1 - b1pow)
        scalars = (*consts[:4], p.dtype.type(lr_t), consts[4])
        if sparse:
            rows, gv = merged(g, p.dtype)
            if rows.size and (rows[0] < 0 or rows[-1] >= p.shape[0]):
                return self.fb["adam"](p.dtype, inputs, attrs)
            _adam_rows(p, m1, m2, rows, gv.reshape(rows.size, p.shape[1]), *scalars)
        else:
            _adam(p.size, *flat, *scalars)
        b1p *= b1
        b2p *= b2
        return {
            "ParamOut": p,
            "Moment1Out": m1,
            "Moment2Out": m2,
            "Beta1PowOut": b1p,
            "Beta2PowOut": b2p,
        }


def register(registry, family: str, device: str, priority: int) -> None:
    k = _Kernels(device, priority)
    if family == "optimizer":
        # small=: a plan hands small updates straight to the numpy kernels (as these do)
        registry.register_kernel(
            "sgd",
            device,
            DTYPES,
            k.sgd,
            priority,
            selected_rows=True,
            inplace=True,
            small=("Param", SMALL),
        )
        registry.register_kernel(
            "adam",
            device,
            DTYPES,
            k.adam,
            priority,
            selected_rows=True,
            small=("Param", ADAM_SMALL),
        )
    elif family == "optimizer_updates":
        from oar_kernels_numba import lamb

        registry.register_kernel(
            "momentum", device, DTYPES, k.momentum, priority, small=("Param", SMALL)
        )
        lamb.register(registry, device, priority)


_adam_serial = _adam.serial


@jit
def adam_step(p, g, m1, m2, b1p, b2p, lr, b1, b2, omb1, omb2, eps):
    """One whole dense adam op in one call (1-D views, one thread): the bias-corrected
    learning rate in float64 from the beta powers, the update, then the powers times the
    betas; the float operations of the numpy kernel and ``_Kernels.adam``."""
    lr_t = lr[0] * np.sqrt(1.0 - b2p[0]) / (1.0 - b1p[0])
    _adam_serial(p, g, m1, m2, b1, b2, omb1, omb2, p.dtype.type(lr_t), eps)
    b1p[0] = b1p[0] * b1
    b2p[0] = b2p[0] * b2
