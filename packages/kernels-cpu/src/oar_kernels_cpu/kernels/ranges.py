"""numpy kernels for shape, range, linspace and increment."""

from __future__ import annotations

import numpy as np

from oar_kernels_cpu.kernels import array_module, kernel

xp = array_module(__name__)


def _scalar(a):
    return xp.asarray(a).reshape(-1)[0]


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


_STEPS: dict = {}  # (dtype, step) -> a one-element array: adding it is ~3x cheaper than a float


@kernel("increment")
def increment(inputs, attrs):
    x = inputs["X"]
    step = attrs["step"]
    if x.ndim == 1 and (x.dtype.kind == "f" or float(step).is_integer()):
        key = (x.dtype, step)
        s = _STEPS.get(key)
        if s is None:
            s = _STEPS[key] = xp.asarray([step]).astype(x.dtype)
        return {"Out": x + s}  # (a While loop's counter: this is per iteration)
    return {"Out": (x + step).astype(x.dtype, copy=False)}
