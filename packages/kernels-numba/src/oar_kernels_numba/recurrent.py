"""lstm (Fluid's dynamic_lstm) over LoD sequences: the whole recurrence in one compiled call.

The numpy kernels run one batched step per time step, about twenty numpy calls each
(a hundred-step batch: two thousand calls forward, three thousand back). These loop
over the steps inside numba: per step one ``np.dot`` (BLAS) for the recurrent
product, then one fused pass over the gates (forward) or the gate gradients
(backward, plus two ``np.dot``). Sequences run in the numpy kernels' order (index
order, the steps of a reversed sequence from its last row), so the arithmetic is
theirs; only BLAS products over differently gathered blocks and libm's scalar
``exp``/``tanh`` differ in the last bits (float tolerance). gru and the uncommon
cases (no LoD, other dtypes) go to the kernels these override.
"""

from __future__ import annotations

import numpy as np
from oar.api import LoDTensor

from oar_kernels_numba._arrays import DTYPES, FLOAT_DTYPES
from oar_kernels_numba._fallback import Fallback
from oar_kernels_numba._jit import jit

ACTS = {"sigmoid": 0, "tanh": 1, "relu": 2, "identity": 3}


@jit
def _act(code, z):
    if code == 0:
        return 1 / (1 + np.exp(-z))
    if code == 1:  # through exp: libm's scalar tanh costs 4x an exp
        e = np.exp(-2 * abs(z))
        t = (1 - e) / (1 + e)
        return t if z >= 0 else -t
    if code == 2:
        return z if z > 0 else z * 0
    return z


@jit
def _dact(code, y):
    """The derivative through the activation's output y."""
    if code == 0:
        return y * (1 - y)
    if code == 1:
        return 1 - y * y
    if code == 2:
        return (y > 0) * (y - y + 1)
    return y - y + 1


@jit
def _row(off, s, t, reverse):
    return off[s] + (off[s + 1] - off[s] - 1 - t if reverse else t)


@jit
def _active(lengths, t, idx):
    na = 0
    for s in range(lengths.size):
        if lengths[s] > t:
            idx[na] = s
            na += 1
    return na


@jit
def _lstm(x, w, b, h0, c0, off, reverse, peep, ga, ca, da, hidden, cell, gates):
    n = off.size - 1
    h = w.shape[0]
    lengths = off[1:] - off[:-1]
    steps = lengths.max() if n else 0
    hs, cs = h0.copy(), c0.copy()
    idx = np.empty(n, np.int64)
    hp = np.empty((n, h), x.dtype)
    for t in range(steps):
        na = _active(lengths, t, idx)
        for k in range(na):
            hp[k] = hs[idx[k]]
        g = np.dot(hp[:na], w)
        for k in range(na):
            s = idx[k]
            r = _row(off, s, t, reverse)
            for j in range(h):
                cp = cs[s, j]
                gc = x[r, j] + g[k, j] + b[j]
                gi = x[r, h + j] + g[k, h + j] + b[h + j]
                gf = x[r, 2 * h + j] + g[k, 2 * h + j] + b[2 * h + j]
                go = x[r, 3 * h + j] + g[k, 3 * h + j] + b[3 * h + j]
                if peep:
                    gi = gi + cp * b[4 * h + j]
                    gf = gf + cp * b[5 * h + j]
                i = _act(ga, gi)
                f = _act(ga, gf)
                cand = _act(da, gc)
                c = f * cp + i * cand
                if peep:
                    go = go + c * b[6 * h + j]
                o = _act(ga, go)
                hv = o * _act(ca, c)
                gates[r, j] = cand
                gates[r, h + j] = i
                gates[r, 2 * h + j] = f
                gates[r, 3 * h + j] = o
                hidden[r, j] = hv
                cell[r, j] = c
                hs[s, j] = hv
                cs[s, j] = c


@jit
def _lstm_grad(w, b, h0, c0, off, reverse, peep, ga, ca, da, hidden, cell, gates, dhid, dcel, dx):
    """Fills dx; returns (dw, db, dh0, dc0)."""
    n = off.size - 1
    h = w.shape[0]
    lengths = off[1:] - off[:-1]
    steps = lengths.max() if n else 0
    dw = np.zeros_like(w)
    db = np.zeros(b.size, b.dtype)
    dhs = np.zeros((n, h), w.dtype)
    dcs = np.zeros((n, h), w.dtype)
    idx = np.empty(n, np.int64)
    hp = np.empty((n, h), w.dtype)
    dg = np.empty((n, 4 * h), w.dtype)
    wt = np.ascontiguousarray(w.T)
    for t in range(steps - 1, -1, -1):
        na = _active(lengths, t, idx)
        for k in range(na):
            s = idx[k]
            r = _row(off, s, t, reverse)
            rp = _row(off, s, t - 1, reverse) if t else -1
            for j in range(h):
                hp[k, j] = hidden[rp, j] if t else h0[s, j]
                cp = cell[rp, j] if t else c0[s, j]
                cand = gates[r, j]
                i = gates[r, h + j]
                f = gates[r, 2 * h + j]
                o = gates[r, 3 * h + j]
                c = cell[r, j]
                ac = _act(ca, c)
                dh = dhid[r, j] + dhs[s, j]
                do = dh * ac * _dact(ga, o)
                dc = dcel[r, j] + dcs[s, j] + dh * o * _dact(ca, ac)
                if peep:
                    dc = dc + do * b[6 * h + j]
                di = dc * cand * _dact(ga, i)
                df = dc * cp * _dact(ga, f)
                dgc = dc * i * _dact(da, cand)
                dcp = dc * f
                if peep:
                    dcp = dcp + di * b[4 * h + j] + df * b[5 * h + j]
                    db[4 * h + j] += di * cp
                    db[5 * h + j] += df * cp
                    db[6 * h + j] += do * c
                dg[k, j] = dgc
                dg[k, h + j] = di
                dg[k, 2 * h + j] = df
                dg[k, 3 * h + j] = do
                dcs[s, j] = dcp
            for j in range(4 * h):
                dx[r, j] = dg[k, j]
                db[j] += dg[k, j]
        dw += np.dot(hp[:na].T, dg[:na])
        dhp = np.dot(dg[:na], wt)
        for k in range(na):
            s = idx[k]
            for j in range(h):
                dhs[s, j] = dhp[k, j]
    return dw, db, dhs, dcs


def _lod_rows(t):
    """(2-D contiguous float rows, last-level offsets, the LoD) or None."""
    if not isinstance(t, LoDTensor) or not t.lod():
        return None
    x = np.asarray(t)
    if x.ndim != 2 or x.dtype not in FLOAT_DTYPES or not x.flags.c_contiguous:
        return None
    off = np.asarray(t.lod()[-1], dtype=np.int64)
    if off.size < 2 or off[0] != 0 or off[-1] != x.shape[0] or np.any(np.diff(off) < 0):
        return None
    return x, off, t.lod()


def _dense(v, shape, dtype):
    """``v`` (or zeros when absent) as a C-contiguous array of ``shape``/``dtype``, or None."""
    if v is None:
        return np.zeros(shape, dtype)
    a = np.asarray(v)
    if a.dtype != dtype or (-1 not in shape and a.size != int(np.prod(shape))):
        return None
    return np.ascontiguousarray(a).reshape(shape)


def _codes(attrs):
    names = (attrs["gate_activation"], attrs["cell_activation"], attrs["candidate_activation"])
    return tuple(ACTS.get(a, -1) for a in names)


def _common(inputs, attrs):
    """The arrays both kernels read, or None for the kernel this overrides."""
    got = _lod_rows(inputs["Input"])
    codes = _codes(attrs)
    if got is None or -1 in codes:
        return None
    x, off, lod = got
    w, n = np.asarray(inputs["Weight"]), off.size - 1
    if w.dtype != x.dtype or w.ndim != 2 or x.shape[1] != 4 * w.shape[0]:
        return None
    h = w.shape[0]
    b = _dense(inputs.get("Bias"), (-1,), x.dtype) if "Bias" in inputs else None
    if b is None or b.size != (7 if attrs["use_peepholes"] else 4) * h:
        return None
    h0 = _dense(inputs.get("H0"), (n, h), x.dtype)
    c0 = _dense(inputs.get("C0"), (n, h), x.dtype)
    if h0 is None or c0 is None:
        return None
    return x, off, lod, np.ascontiguousarray(w), b, h0, c0, codes


class _Kernels:
    def __init__(self, device: str, priority: int) -> None:
        self.fb = {op: Fallback(op, device, priority) for op in ("lstm", "lstm_grad")}

    def lstm(self, inputs, attrs):
        got = _common(inputs, attrs)
        if got is None:
            return self.fb["lstm"](np.asarray(inputs["Input"]).dtype, inputs, attrs)
        x, off, lod, w, b, h0, c0, (ga, ca, da) = got
        h = w.shape[0]
        hidden = np.zeros((x.shape[0], h), x.dtype)
        cell = np.zeros_like(hidden)
        gates = np.zeros((x.shape[0], 4 * h), x.dtype)
        reverse, peep = bool(attrs["is_reverse"]), bool(attrs["use_peepholes"])
        _lstm(x, w, b, h0, c0, off, reverse, peep, ga, ca, da, hidden, cell, gates)
        return {
            "Hidden": LoDTensor(hidden, lod),
            "Cell": LoDTensor(cell, lod),
            "BatchGate": gates,
            "BatchCellPreAct": cell.copy(),
        }

    def lstm_grad(self, inputs, attrs):
        got = _common(inputs, attrs)
        if got is not None:
            x, off, lod, w, b, h0, c0, (ga, ca, da) = got
            h = w.shape[0]
            hidden = _dense(inputs.get("Hidden"), (x.shape[0], h), x.dtype)
            cell = _dense(inputs.get("Cell"), (x.shape[0], h), x.dtype)
            gates = _dense(inputs.get("BatchGate"), (x.shape[0], 4 * h), x.dtype)
            dhid = _dense(inputs.get("Hidden@GRAD"), (x.shape[0], h), x.dtype)
            dcel = _dense(inputs.get("Cell@GRAD"), (x.shape[0], h), x.dtype)
            arrays = (hidden, cell, gates, dhid, dcel)
            if any(a is None for a in arrays) or inputs.get("Hidden") is None:
                got = None
        if got is None:
            return self.fb["lstm_grad"](np.asarray(inputs["Input"]).dtype, inputs, attrs)
        dx = np.empty_like(x)
        reverse, peep = bool(attrs["is_reverse"]), bool(attrs["use_peepholes"])
        dw, db, dh0, dc0 = _lstm_grad(w, b, h0, c0, off, reverse, peep, ga, ca, da, *arrays, dx)
        return {
            "Input@GRAD": LoDTensor(dx, lod),
            "Weight@GRAD": dw,
            "Bias@GRAD": db.reshape(1, -1),
            "H0@GRAD": dh0,
            "C0@GRAD": dc0,
        }


def register(registry, family: str, device: str, priority: int) -> None:
    k = _Kernels(device, priority)
    for op in ("lstm", "lstm_grad"):
        registry.register_kernel(
            op, device, DTYPES, getattr(k, op), priority, lod=True, generic=False
        )
