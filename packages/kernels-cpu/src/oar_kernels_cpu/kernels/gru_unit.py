"""numpy kernels for gru_unit and its gradient (two GEMMs each way, no loops over rows), through
:mod:`._gemm` (oar's thread settings, ``FLAGS_cpu_deterministic``)."""

from __future__ import annotations

from oar_kernels_cpu.kernels import FLOATS, _gemm, array_module, kernel

xp = array_module(__name__)


def _sigmoid(z):
    return 1.0 / (1.0 + xp.exp(-z))


_ACT = {0: lambda z: z, 1: _sigmoid, 2: xp.tanh, 3: lambda z: xp.maximum(z, 0)}
# derivative expressed through the activation's output y
_DACT = {
    0: lambda y: 1.0,
    1: lambda y: y * (1 - y),
    2: lambda y: 1 - y * y,
    3: lambda y: (y > 0).astype(y.dtype),
}


def _split_weight(w, d):
    flat = w.reshape(-1)
    return flat[: 2 * d * d].reshape(d, 2 * d), flat[2 * d * d :].reshape(d, d)


@kernel("gru_unit", FLOATS)
def gru_unit(inputs, attrs):
    x, hp, w = inputs["Input"], inputs["HiddenPrev"], inputs["Weight"]
    b = inputs.get("Bias")
    d = hp.shape[1]
    g = x + b.reshape(1, -1) if b is not None else x
    wg, ws = _split_weight(w, d)
    ur = _ACT[attrs["gate_activation"]](g[:, : 2 * d] + _gemm.matmul(xp, hp, wg))
    u, r = ur[:, :d], ur[:, d:]
    rhp = r * hp
    c = _ACT[attrs["activation"]](g[:, 2 * d :] + _gemm.matmul(xp, rhp, ws))
    h = u * hp + (1 - u) * c if attrs["origin_mode"] else (1 - u) * hp + u * c
    gate = xp.concatenate([ur, c], axis=1).astype(x.dtype, copy=False)
    return {
        "Gate": gate,
        "ResetHiddenPrev": rhp.astype(x.dtype, copy=False),
        "Hidden": h.astype(x.dtype, copy=False),
    }


@kernel("gru_unit_grad", FLOATS, wants_outputs=True)
def gru_unit_grad(inputs, attrs, wanted):
    hp, w, gate, rhp = (
        inputs["HiddenPrev"],
        inputs["Weight"],
        inputs["Gate"],
        inputs["ResetHiddenPrev"],
    )
    dh = inputs["Hidden@GRAD"]
    d = hp.shape[1]
    wg, ws = _split_weight(w, d)
    u, r, c = gate[:, :d], gate[:, d : 2 * d], gate[:, 2 * d :]
    if attrs["origin_mode"]:
        du, dc, dhp = dh * (hp - c), dh * (1 - u), dh * u
    else:
        du, dc, dhp = dh * (c - hp), dh * u, dh * (1 - u)
    dc = dc * _DACT[attrs["activation"]](c)
    drhp = _gemm.matmul(xp, dc, ws.T)
    dr = drhp * hp
    dhp = dhp + drhp * r
    dur = xp.concatenate([du, dr], axis=1) * _DACT[attrs["gate_activation"]](gate[:, : 2 * d])
    want_w = "Weight@GRAD" in wanted
    prods = _gemm.matmuls(xp, [(dur, wg.T)] + ([(hp.T, dur), (rhp.T, dc)] if want_w else []))
    dhp = dhp + prods[0]
    dg = xp.concatenate([dur, dc], axis=1)
    out = {}
    if "Input@GRAD" in wanted:
        out["Input@GRAD"] = dg.astype(hp.dtype, copy=False)
    if "HiddenPrev@GRAD" in wanted:
        out["HiddenPrev@GRAD"] = dhp.astype(hp.dtype, copy=False)
    if want_w:
        dw = xp.concatenate([prods[1].reshape(-1), prods[2].reshape(-1)])
        out["Weight@GRAD"] = dw.reshape(w.shape).astype(w.dtype, copy=False)
    if "Bias@GRAD" in wanted:
        out["Bias@GRAD"] = dg.sum(axis=0, keepdims=True).astype(hp.dtype, copy=False)
    return out
