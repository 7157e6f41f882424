"""numpy kernels for maxout."""

from __future__ import annotations

from oar_kernels_cpu.kernels import FLOATS, array_module, kernel

xp = array_module(__name__)


def _grouped(x, groups, axis):
    axis = axis % x.ndim
    shape = x.shape[:axis] + (x.shape[axis] // groups, groups) + x.shape[axis + 1 :]
    return x.reshape(shape), axis + 1


@kernel("maxout", FLOATS)
def maxout(inputs, attrs):
    g, ax = _grouped(inputs["X"], attrs["groups"], attrs["axis"])
    return {"Out": g.max(axis=ax)}


@kernel("maxout_grad", FLOATS)
def maxout_grad(inputs, attrs):
    x, d = inputs["X"], inputs["Out@GRAD"]
    g, ax = _grouped(x, attrs["groups"], attrs["axis"])
    first = xp.expand_dims(g.argmax(axis=ax), ax)  # the first max of each group gets the gradient
    mask = xp.zeros_like(g)
    xp.put_along_axis(mask, first, 1, ax)
    return {"X@GRAD": (mask * xp.expand_dims(d, ax)).reshape(x.shape)}
