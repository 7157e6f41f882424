"""numpy kernels of lstmp (LSTM with a recurrent projection) over LoD sequences: one batched
step per time step, BPTT in the gradient (clipped entries pass no gradient).

Numpy-only (``generic=False``), like the lstm kernels it mirrors.
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
from oar_kernels_cpu.kernels.recurrent import (
    ACT,
    DACT,
    _grad_of,
    _initial,
    lstm_cell,
    lstm_cell_grad,
)


@kernel("lstmp", FLOATS, lod=True, generic=False)
@step_products_at_one_blas_thread
def lstmp(inputs, attrs):
    x, off, lod = last_level(inputs["Input"], "lstmp", "Input")
    w, pw = array_of(inputs["Weight"]), array_of(inputs["ProjWeight"])
    b = array_of(inputs["Bias"]).reshape(-1)
    h_size, p_size = pw.shape
    n = len(off) - 1
    cc, pc = attrs["cell_clip"], attrs["proj_clip"]
    proj_act = ACT[attrs["proj_activation"]]
    r_state = _initial(inputs, "H0", n, p_size, x.dtype)
    c_state = _initial(inputs, "C0", n, h_size, x.dtype)
    proj = np.zeros((x.shape[0], p_size), x.dtype)
    cell = np.zeros((x.shape[0], h_size), x.dtype)
    raw = np.zeros_like(cell)
    hidden = np.zeros_like(cell)
    gates = np.zeros((x.shape[0], 4 * h_size), x.dtype)
    for active, rows in time_steps(off, attrs["is_reverse"]):
        g = x[rows] + r_state[active] @ w + b[: 4 * h_size]
        cand, i, f, o, c_raw, c, h = lstm_cell(g, c_state[active], b, h_size, attrs, cc)
        r = proj_act(h @ pw)
        if pc > 0:
            r = np.clip(r, -pc, pc)
        gates[rows] = np.concatenate([cand, i, f, o], axis=1)
        cell[rows], raw[rows], hidden[rows], proj[rows] = c, c_raw, h, r
        r_state[active], c_state[active] = r, c
    return {
        "Projection": with_lod(proj, lod),
        "Cell": with_lod(cell, lod),
        "BatchGate": gates,
        "BatchCellPreAct": raw,
        "BatchHidden": hidden,
    }


@kernel("lstmp_grad", FLOATS, lod=True, generic=False)
@step_products_at_one_blas_thread
def lstmp_grad(inputs, attrs):
    x, off, lod = last_level(inputs["Input"], "lstmp_grad", "Input")
    w, pw = array_of(inputs["Weight"]), array_of(inputs["ProjWeight"])
    b = array_of(inputs["Bias"]).reshape(-1)
    h_size, p_size = pw.shape
    n = len(off) - 1
    cc, pc = attrs["cell_clip"], attrs["proj_clip"]
    d_proj, proj_act = DACT[attrs["proj_activation"]], ACT[attrs["proj_activation"]]
    proj, cell = array_of(inputs["Projection"]), array_of(inputs["Cell"])
    gates, raw = array_of(inputs["BatchGate"]), array_of(inputs["BatchCellPreAct"])
    hidden = array_of(inputs["BatchHidden"])
    dproj = _grad_of(inputs, "Projection@GRAD", proj)
    dcell = _grad_of(inputs, "Cell@GRAD", cell)
    r0 = _initial(inputs, "H0", n, p_size, x.dtype)
    c0 = _initial(inputs, "C0", n, h_size, x.dtype)
    steps = time_steps(off, attrs["is_reverse"])
    dx, dw, dpw, db = np.zeros_like(x), np.zeros_like(w), np.zeros_like(pw), np.zeros_like(b)
    dr_state = np.zeros((n, p_size), x.dtype)
    dc_state = np.zeros((n, h_size), x.dtype)
    for t in range(len(steps) - 1, -1, -1):
        active, rows = steps[t]
        if t:
            prev_active, prev_rows = steps[t - 1]
            where = prev_rows[np.searchsorted(prev_active, active)]
            r_prev, c_prev = proj[where], cell[where]
        else:
            r_prev, c_prev = r0[active], c0[active]
        h, c = hidden[rows], cell[rows]
        dr = dproj[rows] + dr_state[active]
        act_out = proj_act(h @ pw)
        if pc > 0:
            dr = dr * (np.abs(act_out) <= pc)
        dz = dr * d_proj(act_out)
        dpw += h.T @ dz
        dh = dz @ pw.T
        dc = dcell[rows] + dc_state[active]
        dg, dc_prev = lstm_cell_grad(
            dh, dc, gates[rows], c, c_prev, b, db, h_size, attrs, raw[rows], cc
        )
        dx[rows] = dg
        dw += r_prev.T @ dg
        db[: 4 * h_size] += dg.sum(axis=0)
        dr_state[active] = dg @ w.T
        dc_state[active] = dc_prev
    return {
        "Input@GRAD": with_lod(dx, lod),
        "Weight@GRAD": dw,
        "ProjWeight@GRAD": dpw,
        "Bias@GRAD": db.reshape(1, -1),
        "H0@GRAD": dr_state,
        "C0@GRAD": dc_state,
    }
