"""numpy kernels for softmax."""

from __future__ import annotations

import numpy as np

from oar_kernels_cpu.kernels import FLOATS, kernel


def softmax_array(x: np.ndarray, axis: int = -1, inplace: bool = False) -> np.ndarray:
    """Softmax along ``axis``; with ``inplace`` the result overwrites ``x``."""
    e = np.subtract(x, x.max(axis=axis, keepdims=True), out=x if inplace else None)
    np.exp(e, out=e)
    e /= e.sum(axis=axis, keepdims=True)
    return e


@kernel("softmax", FLOATS, inplace=True)
def softmax(inputs, attrs, donated=frozenset()):
    return {"Out": softmax_array(inputs["X"], attrs["axis"], "X" in donated)}


@kernel("softmax_grad", FLOATS, inplace=True)
def softmax_grad(inputs, attrs, donated=frozenset()):
    y, d = inputs["Out"], inputs["Out@GRAD"]
    dot = (d * y).sum(axis=attrs["axis"], keepdims=True)
    dx = np.subtract(d, dot, out=d if "Out@GRAD" in donated else None)
    dx *= y
    return {"X@GRAD": dx}
