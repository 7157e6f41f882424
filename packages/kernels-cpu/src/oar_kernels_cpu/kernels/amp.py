"""numpy kernels for the mixed-precision ops (check_finite_and_unscale, update_loss_scaling)."""

from __future__ import annotations

import math

from oar_kernels_cpu.kernels import array_module, kernel

xp = array_module(__name__)


@kernel("check_finite_and_unscale")
def check_finite_and_unscale(inputs, attrs):
    xs, scale = inputs["X"], inputs["Scale"]
    found = any(not bool(xp.isfinite(x).all()) for x in xs)
    inv = 1.0 / scale.reshape(())
    if found:  # the step must not move the parameters: every gradient becomes zero
        outs = [xp.zeros_like(x) for x in xs]
    else:
        outs = [(x * inv).astype(x.dtype, copy=False) for x in xs]
    return {"Out": outs, "FoundInfinite": xp.asarray([found])}


@kernel("update_loss_scaling")
def update_loss_scaling(inputs, attrs):
    found = bool(inputs["FoundInfinite"].reshape(-1)[0])
    scale = inputs["PrevLossScaling"]
    good = int(inputs["InGoodSteps"].reshape(-1)[0])
    bad = int(inputs["InBadSteps"].reshape(-1)[0])
    value = float(scale.reshape(-1)[0])
    if found:
        good, bad = 0, bad + 1
        if bad >= attrs["decr_every_n_nan_or_inf"]:
            value, bad = max(1.0, value * attrs["decr_ratio"]), 0
    else:
        good, bad = good + 1, 0
        if good >= attrs["incr_every_n_steps"]:
            grown = value * attrs["incr_ratio"]
            if math.isfinite(grown):
                value = grown
            good = 0
    steps = inputs["InGoodSteps"]
    return {
        "LossScaling": xp.full(scale.shape, value, dtype=scale.dtype),
        "OutGoodSteps": xp.full(steps.shape, good, dtype=steps.dtype),
        "OutBadSteps": xp.full(steps.shape, bad, dtype=steps.dtype),
    }
