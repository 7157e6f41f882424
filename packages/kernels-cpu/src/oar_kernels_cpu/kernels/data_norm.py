"""data_norm: normalise by running summaries; the grad op reports this batch's statistics."""

from __future__ import annotations

from oar_kernels_cpu.kernels import FLOATS, array_module, kernel

xp = array_module(__name__)


@kernel("data_norm", FLOATS)
def data_norm(inputs, attrs):
    x = inputs["X"]
    means = inputs["BatchSum"] / inputs["BatchSize"]
    scales = xp.sqrt(inputs["BatchSize"] / inputs["BatchSquareSum"])
    y = (x - means) * scales
    if attrs["enable_scale_and_shift"]:
        y = y * inputs["scale_w"] + inputs["bias"]
    return {
        "Y": y.astype(x.dtype, copy=False),
        "Means": means.astype(x.dtype),
        "Scales": scales.astype(x.dtype),
    }


@kernel("data_norm_grad", FLOATS, wants_outputs=True)
def data_norm_grad(inputs, attrs, wanted):
    x, means, scales, dy = inputs["X"], inputs["Means"], inputs["Scales"], inputs["Y@GRAD"]
    n = x.shape[0]
    res = {}
    if attrs["enable_scale_and_shift"]:
        w = inputs["scale_w"]
        if "scale_w@GRAD" in wanted:
            res["scale_w@GRAD"] = (dy * (x - means) * scales).sum(axis=0)
        if "bias@GRAD" in wanted:
            res["bias@GRAD"] = dy.sum(axis=0)
        dy = dy * w
    if "X@GRAD" in wanted:
        res["X@GRAD"] = (dy * scales).astype(x.dtype, copy=False)
    if "BatchSize@GRAD" in wanted:
        res["BatchSize@GRAD"] = xp.full(means.shape, float(n), x.dtype)
    if "BatchSum@GRAD" in wanted:
        res["BatchSum@GRAD"] = x.sum(axis=0)
    if "BatchSquareSum@GRAD" in wanted:
        res["BatchSquareSum@GRAD"] = (
            xp.square(x - means).sum(axis=0) + n * attrs["epsilon"]
        ).astype(x.dtype)
    return res
