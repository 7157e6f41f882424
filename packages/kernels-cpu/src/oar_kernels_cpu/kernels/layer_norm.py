"""numpy kernels for layer_norm: statistics per row of X flattened at begin_norm_axis."""

from __future__ import annotations

import numpy as np

from oar_kernels_cpu.kernels import FLOATS, kernel


def _rows(x, attrs):
    axis = attrs["begin_norm_axis"]
    left = int(np.prod(x.shape[:axis], dtype=np.int64))
    return x.reshape(left, -1)


@kernel("layer_norm", FLOATS)
def layer_norm(inputs, attrs):
    x = inputs["X"]
    x2 = _rows(x, attrs)
    mean = x2.mean(axis=1)
    centred = x2 - mean[:, None]
    var = np.square(centred).mean(axis=1)
    y = centred * (1.0 / np.sqrt(var + np.asarray(attrs["epsilon"], var.dtype)))[:, None]
    if "Scale" in inputs:
        y *= inputs["Scale"].reshape(1, -1)
    if "Bias" in inputs:
        y += inputs["Bias"].reshape(1, -1)
    return {"Y": y.reshape(x.shape), "Mean": mean, "Variance": var}


@kernel("layer_norm_grad", FLOATS, wants_outputs=True)
def layer_norm_grad(inputs, attrs, wanted):
    x, mean, var = inputs["X"], inputs["Mean"], inputs["Variance"]
    x2 = _rows(x, attrs)
    dy = inputs["Y@GRAD"].reshape(x2.shape)
    inv_std = (1.0 / np.sqrt(var + np.asarray(attrs["epsilon"], var.dtype)))[:, None]
    xhat = (x2 - mean[:, None]) * inv_std
    res = {}
    scale = inputs.get("Scale")
    if "Bias@GRAD" in wanted:
        res["Bias@GRAD"] = dy.sum(axis=0).reshape(
            inputs["Scale"].shape if scale is not None else (-1,)
        )
    if "Scale@GRAD" in wanted:
        res["Scale@GRAD"] = (dy * xhat).sum(axis=0).reshape(scale.shape)
    if "X@GRAD" in wanted:
        g = dy * scale.reshape(1, -1) if scale is not None else dy
        dx = g - g.mean(axis=1, keepdims=True) - xhat * (g * xhat).mean(axis=1, keepdims=True)
        dx *= inv_std
        res["X@GRAD"] = dx.reshape(x.shape)
    return res
