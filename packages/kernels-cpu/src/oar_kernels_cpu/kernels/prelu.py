"""numpy kernels for prelu."""

from __future__ import annotations

from oar.api import alpha_shape

from oar_kernels_cpu.kernels import FLOATS, array_module, kernel
from oar_kernels_cpu.kernels._util import reduce_to

xp = array_module(__name__)


def _alpha(x, alpha, mode):
    return alpha.reshape(alpha_shape(x.shape, mode))


@kernel("prelu", FLOATS)
def prelu(inputs, attrs):
    x = inputs["X"]
    a = _alpha(x, inputs["Alpha"], attrs["mode"])
    return {"Out": xp.where(x > 0, x, a * x)}


@kernel("prelu_grad", FLOATS, wants_outputs=True)
def prelu_grad(inputs, attrs, wanted):
    x, alpha, d = inputs["X"], inputs["Alpha"], inputs["Out@GRAD"]
    a = _alpha(x, alpha, attrs["mode"])
    pos = x > 0
    out = {}
    if "X@GRAD" in wanted:
        out["X@GRAD"] = xp.where(pos, d, a * d)
    if "Alpha@GRAD" in wanted:
        ga = xp.where(pos, 0, x * d)
        out["Alpha@GRAD"] = reduce_to(ga, a.shape).reshape(alpha.shape)
    return out
