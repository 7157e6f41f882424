"""numpy kernels of lstm and gru over LoD sequences: one batched step per time step (all
sequences still running), BPTT in the gradient kernels.

Numpy-only (``generic=False``): LoD offsets are host data and the kernels loop over
sequences on the host; a device plugin overrides them.
"""

from __future__ import annotations

import numpy as np

from oar_kernels_cpu.kernels import FLOATS, kernel
from oar_kernels_cpu.kernels._sequence import (
    array_of,
    last_level,
    step_products_at_one_blas_thread,
    time_steps,
    with_lod,
)


def _sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


ACT = {
    "sigmoid": _sigmoid,
    "tanh": np.tanh,
    "relu": lambda z: np.maximum(z, 0),
    "identity": lambda z: z,
}
# derivatives written through the activation's output y
DACT = {
    "sigmoid": lambda y: y * (1 - y),
    "tanh": lambda y: 1 - y * y,
    "relu": lambda y: (y > 0).astype(y.dtype),
    "identity": lambda y: np.ones_like(y),
}


def _initial(inputs, slot: str, n: int, h: int, dtype) -> np.ndarray:
    v = inputs.get(slot)
    return np.zeros((n, h), dtype) if v is None else np.array(array_of(v), dtype=dtype)


def _grad_of(inputs, slot: str, like: np.ndarray) -> np.ndarray:
    v = inputs.get(slot)
    return np.zeros_like(like) if v is None else array_of(v)


# --- lstm ---


def lstm_cell(g, c_prev, b, h_size: int, attrs, clip: float = 0.0) -> tuple:
    """One LSTM step from the pre-activations ``g`` (``[candidate, i, f, o]`` blocks) and the
    previous cell: ``(cand, i, f, o, c_raw, c, h)``; peepholes from ``b[4h:]`` when
    ``attrs["use_peepholes"]``, the cell clipped to ``[-clip, clip]`` when ``clip > 0``."""
    gate, cand_act = ACT[attrs["gate_activation"]], ACT[attrs["candidate_activation"]]
    peep = attrs["use_peepholes"]
    gc, gi, gf, go = np.split(g, 4, axis=1)
    if peep:
        gi = gi + c_prev * b[4 * h_size : 5 * h_size]
        gf = gf + c_prev * b[5 * h_size : 6 * h_size]
    i, f, cand = gate(gi), gate(gf), cand_act(gc)
    c_raw = f * c_prev + i * cand
    c = np.clip(c_raw, -clip, clip) if clip > 0 else c_raw
    if peep:
        go = go + c * b[6 * h_size :]
    o = gate(go)
    return cand, i, f, o, c_raw, c, o * ACT[attrs["cell_activation"]](c)


def lstm_cell_grad(dh, dc, gates, c, c_prev, b, db, h_size: int, attrs, raw=None, clip=0.0):
    """The gradient of :func:`lstm_cell` from ``dh`` and ``dc`` (the cell's incoming
    gradient): ``(dg, dc_prev)``; the peephole gradients are added into ``db``."""
    d_gate, d_cand = DACT[attrs["gate_activation"]], DACT[attrs["candidate_activation"]]
    peep = attrs["use_peepholes"]
    cand, i, f, o = np.split(gates, 4, axis=1)
    ac = ACT[attrs["cell_activation"]](c)
    do = dh * ac * d_gate(o)
    dc = dc + dh * o * DACT[attrs["cell_activation"]](ac)
    if peep:
        dc = dc + do * b[6 * h_size :]
        db[6 * h_size :] += (do * c).sum(axis=0)
    if clip > 0:
        dc = dc * (np.abs(raw) <= clip)
    di = dc * cand * d_gate(i)
    df = dc * c_prev * d_gate(f)
    dgc = dc * i * d_cand(cand)
    dc_prev = dc * f
    if peep:
        dc_prev = dc_prev + di * b[4 * h_size : 5 * h_size] + df * b[5 * h_size : 6 * h_size]
        db[4 * h_size : 5 * h_size] += (di * c_prev).sum(axis=0)
        db[5 * h_size : 6 * h_size] += (df * c_prev).sum(axis=0)
    return np.concatenate([dgc, di, df, do], axis=1), dc_prev


@kernel("lstm", FLOATS, lod=True, generic=False)
@step_products_at_one_blas_thread
def lstm(inputs, attrs):
    x, off, lod = last_level(inputs["Input"], "lstm", "Input")
    w = array_of(inputs["Weight"])
    b = array_of(inputs["Bias"]).reshape(-1)
    h_size = w.shape[0]
    n = len(off) - 1
    h_state = _initial(inputs, "H0", n, h_size, x.dtype)
    c_state = _initial(inputs, "C0", n, h_size, x.dtype)
    hidden = np.zeros((x.shape[0], h_size), x.dtype)
    cell = np.zeros_like(hidden)
    gates = np.zeros((x.shape[0], 4 * h_size), x.dtype)
    for active, rows in time_steps(off, attrs["is_reverse"]):
        g = x[rows] + h_state[active] @ w + b[: 4 * h_size]
        cand, i, f, o, _, c, h = lstm_cell(g, c_state[active], b, h_size, attrs)
        gates[rows] = np.concatenate([cand, i, f, o], axis=1)
        hidden[rows], cell[rows] = h, c
        h_state[active], c_state[active] = h, c
    return {
        "Hidden": with_lod(hidden, lod),
        "Cell": with_lod(cell, lod),
        "BatchGate": gates,
        "BatchCellPreAct": cell.copy(),
    }


@kernel("lstm_grad", FLOATS, lod=True, generic=False)
@step_products_at_one_blas_thread
def lstm_grad(inputs, attrs):
    x, off, lod = last_level(inputs["Input"], "lstm_grad", "Input")
    w = array_of(inputs["Weight"])
    b = array_of(inputs["Bias"]).reshape(-1)
    h_size = w.shape[0]
    n = len(off) - 1
    hidden, cell = array_of(inputs["Hidden"]), array_of(inputs["Cell"])
    gates = array_of(inputs["BatchGate"])
    dhidden = _grad_of(inputs, "Hidden@GRAD", hidden)
    dcell = _grad_of(inputs, "Cell@GRAD", cell)
    h0 = _initial(inputs, "H0", n, h_size, x.dtype)
    c0 = _initial(inputs, "C0", n, h_size, x.dtype)
    steps = time_steps(off, attrs["is_reverse"])
    dx = np.zeros_like(x)
    dw = np.zeros_like(w)
    db = np.zeros_like(b)
    dh_state = np.zeros((n, h_size), x.dtype)
    dc_state = np.zeros((n, h_size), x.dtype)
    for t in range(len(steps) - 1, -1, -1):
        active, rows = steps[t]
        if t:
            prev_active, prev_rows = steps[t - 1]
            where = np.searchsorted(prev_active, active)
            h_prev, c_prev = hidden[prev_rows[where]], cell[prev_rows[where]]
        else:
            h_prev, c_prev = h0[active], c0[active]
        dh = dhidden[rows] + dh_state[active]
        dc = dcell[rows] + dc_state[active]
        dg, dc_prev = lstm_cell_grad(dh, dc, gates[rows], cell[rows], c_prev, b, db, h_size, attrs)
        dx[rows] = dg
        dw += h_prev.T @ dg
        db[: 4 * h_size] += dg.sum(axis=0)
        dh_state[active] = dg @ w.T
        dc_state[active] = dc_prev
    return {
        "Input@GRAD": with_lod(dx, lod),
        "Weight@GRAD": dw,
        "Bias@GRAD": db.reshape(1, -1),
        "H0@GRAD": dh_state,
        "C0@GRAD": dc_state,
    }


# --- gru ---


def _gru_weights(w: np.ndarray) -> tuple:
    h = w.shape[0]
    flat = w.reshape(-1)
    return flat[: 2 * h * h].reshape(h, 2 * h), flat[2 * h * h :].reshape(h, h)


@kernel("gru", FLOATS, lod=True, generic=False)
@step_products_at_one_blas_thread
def gru(inputs, attrs):
    x, off, lod = last_level(inputs["Input"], "gru", "Input")
    w = array_of(inputs["Weight"])
    h_size = w.shape[0]
    wg, wc = _gru_weights(w)
    bias = inputs.get("Bias")
    b = array_of(bias).reshape(-1) if bias is not None else np.zeros(3 * h_size, x.dtype)
    gate_act, act = ACT[attrs["gate_activation"]], ACT[attrs["activation"]]
    n = len(off) - 1
    h_state = _initial(inputs, "H0", n, h_size, x.dtype)
    hidden = np.zeros((x.shape[0], h_size), x.dtype)
    gates = np.zeros((x.shape[0], 3 * h_size), x.dtype)
    reset_prev = np.zeros_like(hidden)
    for active, rows in time_steps(off, attrs["is_reverse"]):
        h_prev = h_state[active]
        g = x[rows] + b
        ur = gate_act(g[:, : 2 * h_size] + h_prev @ wg)
        u, r = ur[:, :h_size], ur[:, h_size:]
        rh = r * h_prev
        c = act(g[:, 2 * h_size :] + rh @ wc)
        h = u * h_prev + (1 - u) * c if attrs["origin_mode"] else (1 - u) * h_prev + u * c
        gates[rows] = np.concatenate([ur, c], axis=1)
        reset_prev[rows], hidden[rows] = rh, h
        h_state[active] = h
    return {
        "Hidden": with_lod(hidden, lod),
        "BatchGate": gates,
        "BatchResetHiddenPrev": reset_prev,
        "BatchHidden": hidden.copy(),
    }


@kernel("gru_grad", FLOATS, lod=True, generic=False)
@step_products_at_one_blas_thread
def gru_grad(inputs, attrs):
    x, off, lod = last_level(inputs["Input"], "gru_grad", "Input")
    w = array_of(inputs["Weight"])
    h_size = w.shape[0]
    wg, wc = _gru_weights(w)
    d_gate, d_act = DACT[attrs["gate_activation"]], DACT[attrs["activation"]]
    n = len(off) - 1
    hidden = array_of(inputs["Hidden"])
    gates, reset_prev = array_of(inputs["BatchGate"]), array_of(inputs["BatchResetHiddenPrev"])
    dhidden = _grad_of(inputs, "Hidden@GRAD", hidden)
    h0 = _initial(inputs, "H0", n, h_size, x.dtype)
    steps = time_steps(off, attrs["is_reverse"])
    dx = np.zeros_like(x)
    dwg, dwc = np.zeros_like(wg), np.zeros_like(wc)
    dh_state = np.zeros((n, h_size), x.dtype)
    for t in range(len(steps) - 1, -1, -1):
        active, rows = steps[t]
        if t:
            prev_active, prev_rows = steps[t - 1]
            h_prev = hidden[prev_rows[np.searchsorted(prev_active, active)]]
        else:
            h_prev = h0[active]
        u, r, c = gates[rows, :h_size], gates[rows, h_size : 2 * h_size], gates[rows, 2 * h_size :]
        dh = dhidden[rows] + dh_state[active]
        if attrs["origin_mode"]:
            du, dc, dh_prev = dh * (h_prev - c), dh * (1 - u), dh * u
        else:
            du, dc, dh_prev = dh * (c - h_prev), dh * u, dh * (1 - u)
        dc = dc * d_act(c)
        drh = dc @ wc.T
        dr = drh * h_prev
        dh_prev = dh_prev + drh * r
        dur = np.concatenate([du, dr], axis=1) * d_gate(gates[rows, : 2 * h_size])
        dh_prev = dh_prev + dur @ wg.T
        dx[rows] = np.concatenate([dur, dc], axis=1)
        dwg += h_prev.T @ dur
        dwc += reset_prev[rows].T @ dc
        dh_state[active] = dh_prev
    dw = np.concatenate([dwg.reshape(-1), dwc.reshape(-1)]).reshape(w.shape)
    return {
        "Input@GRAD": with_lod(dx, lod),
        "Weight@GRAD": dw,
        "Bias@GRAD": dx.sum(axis=0, keepdims=True),
        "H0@GRAD": dh_state,
    }
