"""numpy kernels for margin_rank_loss and rank_loss."""

from __future__ import annotations

from oar_kernels_cpu.kernels import FLOATS, array_module, kernel
from oar_kernels_cpu.kernels._util import difference_grads

xp = array_module(__name__)


@kernel("margin_rank_loss", FLOATS)
def margin_rank_loss(inputs, attrs):
    x1, x2, label = inputs["X1"], inputs["X2"], inputs["Label"]
    out = xp.maximum(0, -label * (x1 - x2) + x1.dtype.type(attrs["margin"]))
    return {"Out": out, "Activated": (out > 0).astype(x1.dtype)}


@kernel("margin_rank_loss_grad", FLOATS, wants_outputs=True)
def margin_rank_loss_grad(inputs, attrs, wanted):
    g = -inputs["Label"] * inputs["Activated"] * inputs["Out@GRAD"]
    return difference_grads(wanted, "X1@GRAD", "X2@GRAD", g)


@kernel("rank_loss", FLOATS)
def rank_loss(inputs, attrs):
    diff = inputs["Left"] - inputs["Right"]
    return {"Out": xp.logaddexp(0, diff).astype(diff.dtype, copy=False) - inputs["Label"] * diff}


@kernel("rank_loss_grad", FLOATS, wants_outputs=True)
def rank_loss_grad(inputs, attrs, wanted):
    diff = inputs["Left"] - inputs["Right"]
    g = (xp.exp(-xp.logaddexp(0, -diff)) - inputs["Label"]) * inputs["Out@GRAD"]
    return difference_grads(wanted, "Left@GRAD", "Right@GRAD", g.astype(diff.dtype, copy=False))
