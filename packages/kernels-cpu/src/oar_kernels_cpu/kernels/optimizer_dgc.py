"""dgc_momentum: momentum, then top-k sparsified updates with momentum correction (in place)."""

from __future__ import annotations

import math

from oar_kernels_cpu.kernels import FLOATS, array_module, kernel

xp = array_module(__name__)


def current_sparsity(step: float, attrs: dict) -> float:
    sp = list(attrs["sparsity"])
    idx = int((step - attrs["rampup_begin_step"]) * len(sp) / max(attrs["rampup_step"], 1.0))
    return float(sp[min(max(idx, 0), len(sp) - 1)])


@kernel("dgc_momentum", FLOATS)
def dgc_momentum(inputs, attrs):
    p, g, u, v = inputs["Param"], inputs["Grad"], inputs["U"], inputs["V"]
    lr = float(xp.asarray(inputs["LearningRate"]).reshape(-1)[0])
    step = float(xp.asarray(inputs["CurrentStep"]).reshape(-1)[0])
    m = attrs["mu"]
    if step < attrs["rampup_begin_step"]:  # plain momentum
        u *= m
        u += g
        p -= (lr * (g + m * u) if attrs["use_nesterov"] else lr * u).astype(p.dtype, copy=False)
        return {"ParamOut": p, "UOut": u, "VOut": v}
    if attrs["use_nesterov"]:
        u += g
        u *= m
        v += u + g
    else:
        u *= m
        u += g
        v += u
    flat = xp.abs(v).reshape(-1)
    k = max(1, int(math.ceil(flat.size * (1.0 - current_sparsity(step, attrs)))))
    thr = xp.partition(flat, flat.size - k)[flat.size - k]
    mask = xp.abs(v) >= thr
    p -= (lr * v * mask).astype(p.dtype, copy=False)
    v *= ~mask
    u *= ~mask
    return {"ParamOut": p, "UOut": u, "VOut": v}


def _step_and_lr(inputs):
    step = float(xp.asarray(inputs["CurrentStep"]).reshape(-1)[0])
    lr = inputs.get("LearningRate")
    return step, (None if lr is None else float(xp.asarray(lr).reshape(-1)[0]))


@kernel("dgc", FLOATS)
def dgc(inputs, attrs):
    """Local half of collective DGC: momentum correction, then the top-k of ``v`` encoded."""
    g, u, v = inputs["Grad"], inputs["U"].copy(), inputs["V"].copy()
    step, _ = _step_and_lr(inputs)
    if step < attrs["rampup_begin_step"]:  # dense phase: the whole gradient goes out
        flat = g.reshape(-1)
        index = xp.arange(flat.size, dtype="int64")
        return {"UOut": u, "VOut": v, "EncodeIndex": index, "EncodeValue": flat.copy()}
    m = attrs["mu"]
    if attrs["use_nesterov"]:
        u = m * (u + g)
        v = v + u + g
    else:
        u = m * u + g
        v = v + u
    flat_v, flat_u = v.reshape(-1), u.reshape(-1)
    k = max(1, int(math.ceil(flat_v.size * (1.0 - current_sparsity(step, attrs)))))
    index = xp.sort(xp.argpartition(xp.abs(flat_v), flat_v.size - k)[flat_v.size - k :])
    value = flat_v[index].copy()
    flat_v[index] = 0
    flat_u[index] = 0
    return {
        "UOut": u.astype(g.dtype, copy=False),
        "VOut": v.astype(g.dtype, copy=False),
        "EncodeIndex": index.astype("int64"),
        "EncodeValue": value.astype(g.dtype, copy=False),
    }


@kernel("dgc_apply", FLOATS)
def dgc_apply(inputs, attrs):
    """Sum the gathered (index, value) pieces into a dense gradient and apply it."""
    p, u = inputs["Param"], inputs["U"]
    step, lr = _step_and_lr(inputs)
    index = inputs["Index"].reshape(-1).astype("int64")
    value = inputs["Value"].reshape(-1).astype("float64")
    dense = xp.bincount(index, weights=value, minlength=p.size)[: p.size]
    dense = dense.reshape(p.shape).astype(p.dtype)
    if step >= attrs["rampup_begin_step"]:  # the momentum is already in the sent values
        return {"ParamOut": p - lr * dense, "UOut": u}
    m = attrs["mu"]
    u = m * u + dense
    step_dir = dense + m * u if attrs["use_nesterov"] else u
    return {"ParamOut": (p - lr * step_dir).astype(p.dtype, copy=False), "UOut": u}
