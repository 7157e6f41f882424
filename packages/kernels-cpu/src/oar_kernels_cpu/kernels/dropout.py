"""numpy kernels for dropout (both dropout_implementation values)."""

from __future__ import annotations

import numpy as np

from oar_kernels_cpu.kernels import FLOATS, array_module, kernel
from oar_kernels_cpu.kernels._util import rng_for

xp = array_module(__name__)


def _generator(inputs, attrs):
    if "Seed" in inputs:
        return xp.random.default_rng(int(xp.asarray(inputs["Seed"]).reshape(-1)[0]))
    if attrs["fix_seed"]:
        return xp.random.default_rng(attrs["seed"])
    return rng_for(xp, 0)


@kernel("dropout", FLOATS, wants_outputs=True)
def dropout(inputs, attrs, wanted):
    x = inputs["X"]
    p = attrs["dropout_prob"]
    upscale = attrs["dropout_implementation"] == "upscale_in_train"
    if attrs["is_test"]:
        out = x.copy() if upscale else x * xp.asarray(1.0 - p, x.dtype)
        # no mask in inference: an all-kept view costs nothing
        return {"Out": out, "Mask": xp.broadcast_to(xp.ones((), np.uint8), x.shape)}
    if p >= 1.0:
        mask = xp.zeros(x.shape, np.uint8)
    else:
        mask = (_generator(inputs, attrs).random(x.shape, dtype=np.float32) >= p).view(np.uint8)
    out = x * mask
    if upscale and p < 1.0:
        out *= xp.asarray(1.0 / (1.0 - p), x.dtype)
    return {"Out": out, "Mask": mask}


@kernel("dropout_grad", None)
def dropout_grad(inputs, attrs):
    dy, mask = inputs["Out@GRAD"], inputs.get("Mask")
    p = attrs["dropout_prob"]
    upscale = attrs["dropout_implementation"] == "upscale_in_train"
    if attrs["is_test"] or mask is None:
        return {"X@GRAD": dy.copy() if upscale else dy * xp.asarray(1.0 - p, dy.dtype)}
    dx = dy * mask
    if upscale and p < 1.0:
        dx *= xp.asarray(1.0 / (1.0 - p), dy.dtype)
    return {"X@GRAD": dx}
