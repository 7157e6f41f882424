"""numpy kernels for softmax."""

from __future__ import annotations

import numpy as np

from oar_kernels_cpu.kernels import FLOATS, kernel


def softmax_array(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    e /= e.sum(axis=axis, keepdims=True)
    return e


@kernel("softmax", FLOATS)
def softmax(inputs, attrs):
    return {"Out": softmax_array(inputs["X"], attrs["axis"])}


@kernel("softmax_grad", FLOATS)
def softmax_grad(inputs, attrs):
    y, d = inputs["Out"], inputs["Out@GRAD"]
    axis = attrs["axis"]
    return {"X@GRAD": y * (d - (d * y).sum(axis=axis, keepdims=True))}
