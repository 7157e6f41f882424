"""numpy kernels for shape, range, linspace and increment."""

from __future__ import annotations

import numpy as np

from oar_kernels_cpu.kernels import array_module, kernel

xp = array_module(__name__)


def _scalar(a):
    return xp.asarray(a).reshape(-1)[0].item()  # a Python number: cupy.arange takes no arrays


@kernel("shape")
def shape(inputs, attrs):
    return {"Out": xp.asarray(xp.shape(inputs["Input"]), dtype=np.int32)}


@kernel("range")
def range_(inputs, attrs):
    start, end, step = (_scalar(inputs[k]) for k in ("Start", "End", "Step"))
    if step == 0:
        raise ValueError("range: Step must not be 0")
    return {"Out": xp.arange(start, end, step, dtype=xp.asarray(inputs["Start"]).dtype)}


@kernel("linspace")
def linspace(inputs, attrs):
    start, stop, num = (
        _scalar(inputs["Start"]),
        _scalar(inputs["Stop"]),
        int(_scalar(inputs["Num"])),
    )
    if num < 1:
        raise ValueError(f"linspace: Num must be >= 1, given {num}")
    return {"Out": xp.linspace(start, stop, num, dtype=xp.asarray(inputs["Start"]).dtype)}


# dtype -> {step: a one-element array}: adding it is ~3x cheaper than a float (a While loop's
# counter: this is per iteration, so the lookup avoids hashing a (dtype, step) tuple)
_STEPS: dict = {}


@kernel("increment")
def increment(inputs, attrs):
    x = inputs["X"]
    step = attrs["step"]
    by_step = _STEPS.get(x.dtype)
    s = None if by_step is None else by_step.get(step)
    if s is not None and x.ndim:
        return {"Out": x + s}
    if x.ndim == 1 and (x.dtype.kind == "f" or float(step).is_integer()):
        s = _STEPS.setdefault(x.dtype, {})[step] = xp.asarray([step]).astype(x.dtype)
        return {"Out": x + s}
    return {"Out": (x + step).astype(x.dtype, copy=False)}
