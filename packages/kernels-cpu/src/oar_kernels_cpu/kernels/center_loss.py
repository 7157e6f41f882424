"""center_loss: distances to the class centres; the centres move in place."""

from __future__ import annotations

from oar_kernels_cpu.kernels import FLOATS, array_module, kernel
from oar_kernels_cpu.kernels._util import scatter_add

xp = array_module(__name__)


@kernel("center_loss", FLOATS)
def center_loss(inputs, attrs):
    x, c = inputs["X"], inputs["Centers"]
    lab = inputs["Label"].reshape(-1).astype("int64")
    diff = x - c[lab]
    loss = 0.5 * xp.sum(diff * diff, axis=1, keepdims=True)
    if attrs["need_update"]:
        alpha = float(xp.asarray(inputs["CenterUpdateRate"]).reshape(-1)[0])
        acc = xp.zeros_like(c)
        scatter_add(xp, acc, lab, -diff)  # sum of (c_j - x_i)
        count = xp.bincount(lab, minlength=c.shape[0])[: c.shape[0]].astype(c.dtype)
        c -= (alpha * acc / (1.0 + count)[:, None]).astype(c.dtype, copy=False)
    return {"SampleCenterDiff": diff, "Loss": loss.astype(x.dtype, copy=False), "CentersOut": c}


@kernel("center_loss_grad", FLOATS)
def center_loss_grad(inputs, attrs):
    return {"X@GRAD": inputs["SampleCenterDiff"] * inputs["Loss@GRAD"].reshape(-1, 1)}
