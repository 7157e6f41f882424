"""numpy kernels for softmax."""

from __future__ import annotations

from oar_kernels_cpu.kernels import FLOATS, array_module, kernel

xp = array_module(__name__)


def softmax_array(x: xp.ndarray, axis: int = -1, inplace: bool = False) -> xp.ndarray:
    """Softmax along ``axis``; with ``inplace`` the result overwrites ``x``."""
    e = xp.subtract(x, x.max(axis=axis, keepdims=True), out=x if inplace else None)
    xp.exp(e, out=e)
    e /= e.sum(axis=axis, keepdims=True)
    return e


@kernel("softmax", FLOATS, inplace=True)
def softmax(inputs, attrs, donated=frozenset()):
    return {"Out": softmax_array(inputs["X"], attrs["axis"], "X" in donated)}


@kernel("softmax_grad", FLOATS, inplace=True)
def softmax_grad(inputs, attrs, donated=frozenset()):
    y, d = inputs["Out"], inputs["Out@GRAD"]
    dot = (d * y).sum(axis=attrs["axis"], keepdims=True)
    dx = xp.subtract(d, dot, out=d if "Out@GRAD" in donated else None)
    dx *= y
    return {"X@GRAD": dx}
