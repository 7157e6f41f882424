"""softmax and softmax_with_cross_entropy over the last axis: three passes per row.

The numpy kernels take five to eight passes (max, subtract, exp, sum, log, divide,
a gather and a scatter for the hard labels); these take three: a compiled pass
(row max, subtract, the label's logit), numpy's vectorised ``exp`` in place (numba's
scalar exp costs ~10x more), a compiled pass (row sum, divide, the loss); rows in
parallel for large inputs. A row's sums run on one thread
(vectorised: ``fastmath={"reassoc"}``), so results do not depend on the thread count;
they are not numpy's pairwise sums, so the forward results are the numpy kernels'
within float tolerance; the gradient of softmax_with_cross_entropy does the numpy kernel's float
operations (``sm * d``, ``(sm - 1) * d`` at the label), bit for bit. Soft labels,
another axis, ids out of range (the numpy kernel raises the error) and small inputs
go to the kernels these override.
"""

from __future__ import annotations

import numpy as np

from oar_kernels_numba._fallback import Fallback
from oar_kernels_numba._jit import SMALL, loop, prange

DTYPES = ("float32", "float64")
FLOAT_DTYPES = frozenset(np.dtype(t) for t in DTYPES)  # dtype.name costs ~1 µs a call


@loop
def _shift(x, label, ignore, out, zk):
    """out = x - (row max); zk[r] = out[r, label[r]] (label: one per row, or empty)."""
    n, c = x.shape
    bad = 0
    for r in prange(n):
        m = x[r, 0]
        for j in range(1, c):
            if x[r, j] > m:
                m = x[r, j]
        for j in range(c):
            out[r, j] = x[r, j] - m
        if label.size:
            k = label[r]
            if k == ignore:
                zk[r] = 0
            elif 0 <= k < c:
                zk[r] = out[r, k]
            else:
                zk[r] = 0
                bad += 1
    return bad


@loop(fastmath={"reassoc"})  # a row never spans threads
def _normalise(e, label, ignore, zk, loss):
    """e[r] /= its sum; with labels, loss[r] = log(sum) - zk[r] (0 where ignored)."""
    n, c = e.shape
    for r in prange(n):
        s = 0.0
        for j in range(c):
            s += e[r, j]
        t = e.dtype.type(s)
        for j in range(c):
            e[r, j] = e[r, j] / t
        if label.size:
            loss[r] = 0 if label[r] == ignore else np.log(s) - zk[r]


@loop(fastmath={"reassoc"})  # a row never spans threads
def _softmax_grad(y, d, out):
    n, c = y.shape
    for r in prange(n):
        dot = 0.0
        for j in range(c):
            dot += d[r, j] * y[r, j]
        for j in range(c):
            out[r, j] = (d[r, j] - dot) * y[r, j]


_NO_LABEL = np.empty(0, np.int64)


def _softmax_rows(x2, out2, lab=_NO_LABEL, ignore=0, loss=None):
    """softmax of each row into out2 (numpy's vectorised exp in between); the bad-id count."""
    zk = np.empty(x2.shape[0] if lab.size else 0, out2.dtype)
    bad = _shift(x2.size, x2, lab, ignore, out2, zk)
    np.exp(out2, out=out2)
    _normalise(x2.size, out2, lab, ignore, zk, zk if loss is None else loss)
    return bad


@loop
def _sce_grad(sm, label, ignore, d, one, out):
    n, c = sm.shape
    for r in prange(n):
        k = label[r]
        if k == ignore:
            for j in range(c):
                out[r, j] = 0
            continue
        dr = d[r]
        for j in range(c):
            out[r, j] = sm[r, j] * dr
        if 0 <= k < c:
            out[r, k] = (sm[r, k] - one) * dr


def _rows(x, axis):
    """(rows, classes) view of a C-contiguous float array for a last-axis op, or None."""
    if type(x) is not np.ndarray or x.dtype not in FLOAT_DTYPES or x.size < SMALL:
        return None
    if x.ndim < 1 or axis % x.ndim != x.ndim - 1 or not x.flags.c_contiguous or not x.shape[-1]:
        return None
    return x.reshape(-1, x.shape[-1])


def _labels(label, x):
    if type(label) is not np.ndarray or label.dtype.kind not in "iu":
        return None
    if label.shape != x.shape[:-1] + (1,):  # the numpy kernel raises the error
        return None
    return np.ascontiguousarray(label.reshape(-1), dtype=np.int64)


class _Kernels:
    def __init__(self, device: str, priority: int) -> None:
        ops = ("softmax", "softmax_grad", "softmax_with_cross_entropy")
        self.fb = {op: Fallback(op, device, priority) for op in ops + (ops[-1] + "_grad",)}

    def softmax(self, inputs, attrs, donated=frozenset()):
        x = inputs["X"]
        x2 = _rows(x, attrs["axis"])
        if x2 is None:
            return self.fb["softmax"](x.dtype, inputs, attrs, donated=donated)
        out = x if "X" in donated else np.empty_like(x)
        _softmax_rows(x2, out.reshape(x2.shape))
        return {"Out": out}

    def softmax_grad(self, inputs, attrs, donated=frozenset()):
        y, d = inputs["Out"], inputs["Out@GRAD"]
        y2 = _rows(y, attrs["axis"])
        if (
            y2 is None
            or _rows(d, attrs["axis"]) is None
            or d.shape != y.shape
            or d.dtype != y.dtype
        ):
            return self.fb["softmax_grad"](d.dtype, inputs, attrs, donated=donated)
        out = d if "Out@GRAD" in donated else np.empty_like(d)
        _softmax_grad(y.size, y2, d.reshape(y2.shape), out.reshape(y2.shape))
        return {"X@GRAD": out}

    def softmax_with_cross_entropy(self, inputs, attrs):
        x, label = inputs["Logits"], inputs["Label"]
        x2 = None if attrs["soft_label"] else _rows(x, attrs["axis"])
        lab = None if x2 is None else _labels(label, x)
        if lab is None:
            return self.fb["softmax_with_cross_entropy"](x.dtype, inputs, attrs)
        soft = np.empty_like(x)
        loss = np.empty(x.shape[:-1] + (1,), x.dtype)
        bad = _softmax_rows(
            x2, soft.reshape(x2.shape), lab, attrs["ignore_index"], loss.reshape(-1)
        )
        if bad:  # an id out of range: the numpy kernel raises its error
            return self.fb["softmax_with_cross_entropy"](x.dtype, inputs, attrs)
        return {"Softmax": soft, "Loss": loss}

    def softmax_with_cross_entropy_grad(self, inputs, attrs):
        sm, label, d = inputs["Softmax"], inputs["Label"], inputs["Loss@GRAD"]
        sm2 = None if attrs["soft_label"] else _rows(sm, attrs["axis"])
        lab = None if sm2 is None else _labels(label, sm)
        ok = lab is not None and type(d) is np.ndarray and d.dtype == sm.dtype
        if not ok or d.size != sm2.shape[0]:
            return self.fb["softmax_with_cross_entropy_grad"](sm.dtype, inputs, attrs)
        out = np.empty_like(sm)
        d1 = np.ascontiguousarray(d).reshape(-1)
        one = sm.dtype.type(1)
        _sce_grad(sm.size, sm2, lab, attrs["ignore_index"], d1, one, out.reshape(sm2.shape))
        return {"Logits@GRAD": out}


def register(registry, family: str, device: str, priority: int) -> None:
    k = _Kernels(device, priority)
    if family == "softmax":
        registry.register_kernel("softmax", device, DTYPES, k.softmax, priority, inplace=True)
        registry.register_kernel(
            "softmax_grad", device, DTYPES, k.softmax_grad, priority, inplace=True
        )
    else:
        for op in ("softmax_with_cross_entropy", "softmax_with_cross_entropy_grad"):
            registry.register_kernel(op, device, DTYPES, getattr(k, op), priority)
