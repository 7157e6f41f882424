"""data_norm: normalise by running summaries; the grad op reports this batch's statistics.

With ``slot_dim > 0`` the columns are slots of ``slot_dim`` values and a slot whose first
value is below 1e-7 in magnitude is "not shown" in that row (Fluid 1.8.5's rule): its
output is 0, and the summaries' "gradients" become averages over the rows that show it.
"""

from __future__ import annotations

from oar_kernels_cpu.kernels import FLOATS, array_module, kernel

xp = array_module(__name__)

_SHOW_THRESHOLD = 1e-7


def _shown(x, slot_dim):
    """[N, C] 0/1 mask: 1 where the column's slot is shown in that row (all ones without slots)."""
    if slot_dim <= 0:
        return None
    first = x[:, ::slot_dim]
    show = (xp.abs(first.astype("float64")) >= _SHOW_THRESHOLD).astype(x.dtype)
    return xp.repeat(show, slot_dim, axis=1)


@kernel("data_norm", FLOATS)
def data_norm(inputs, attrs):
    x = inputs["X"]
    means = inputs["BatchSum"] / inputs["BatchSize"]
    scales = xp.sqrt(inputs["BatchSize"] / inputs["BatchSquareSum"])
    y = (x - means) * scales
    if attrs["enable_scale_and_shift"]:
        y = y * inputs["scale_w"] + inputs["bias"]
    mask = _shown(x, attrs.get("slot_dim", -1))
    if mask is not None:
        y = y * mask
    return {
        "Y": y.astype(x.dtype, copy=False),
        "Means": means.astype(x.dtype),
        "Scales": scales.astype(x.dtype),
    }


def _summary_grads(x, means, mask, eps):
    """The summaries' "gradients": batch size, sum and centred square sum (per shown row)."""
    n = x.shape[0]
    sq = xp.square(x - means)
    if mask is None:
        size = xp.full(means.shape, float(n), x.dtype)
        return {
            "BatchSize@GRAD": size,
            "BatchSum@GRAD": x.sum(axis=0),
            "BatchSquareSum@GRAD": (sq.sum(axis=0) + n * eps).astype(x.dtype),
        }
    count = mask.sum(axis=0)
    seen = count > 0
    safe = xp.where(seen, count, 1)
    return {
        "BatchSize@GRAD": seen.astype(x.dtype),
        "BatchSum@GRAD": xp.where(seen, (x * mask).sum(axis=0) / safe, 0).astype(x.dtype),
        "BatchSquareSum@GRAD": xp.where(
            seen, (sq * mask).sum(axis=0) / safe + count * eps, 0
        ).astype(x.dtype),
    }


@kernel("data_norm_grad", FLOATS, wants_outputs=True)
def data_norm_grad(inputs, attrs, wanted):
    x, means, scales, dy = inputs["X"], inputs["Means"], inputs["Scales"], inputs["Y@GRAD"]
    mask = _shown(x, attrs.get("slot_dim", -1))
    res = {}
    if attrs["enable_scale_and_shift"]:
        # Fluid masks the scale/shift gradients (and X's) by the shown slots; without
        # scale and shift its X gradient is not masked, which is kept here.
        if mask is not None:
            dy = dy * mask
        w = inputs["scale_w"]
        if "scale_w@GRAD" in wanted:
            res["scale_w@GRAD"] = (dy * (x - means) * scales).sum(axis=0)
        if "bias@GRAD" in wanted:
            res["bias@GRAD"] = dy.sum(axis=0)
        dy = dy * w
    if "X@GRAD" in wanted:
        res["X@GRAD"] = (dy * scales).astype(x.dtype, copy=False)
    stats = ("BatchSize@GRAD", "BatchSum@GRAD", "BatchSquareSum@GRAD")
    if any(k in wanted for k in stats):
        grads = _summary_grads(x, means, mask, attrs["epsilon"])
        res.update({k: v for k, v in grads.items() if k in wanted})
    return res
