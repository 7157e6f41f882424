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
