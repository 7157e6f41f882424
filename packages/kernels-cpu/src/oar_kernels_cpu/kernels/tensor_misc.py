"""numpy kernels for cos_sim, label_smooth, reverse, roll, multiplex, eye, diag, unique, size and
the isfinite/isinf/isnan checks."""

from __future__ import annotations

import numpy as np

from oar_kernels_cpu.kernels import FLOATS, array_module, kernel
from oar_kernels_cpu.kernels._util import reduce_to

xp = array_module(__name__)


def _rows(a):
    return a.reshape(a.shape[0], -1)


@kernel("cos_sim", FLOATS)
def cos_sim(inputs, attrs):
    x, y = _rows(inputs["X"]), _rows(inputs["Y"])
    if x.shape[1] != y.shape[1] or y.shape[0] not in (1, x.shape[0]):
        raise ValueError(
            f"cos_sim: Y of shape {list(inputs['Y'].shape)} must have X's shape "
            f"{list(inputs['X'].shape)} or a single row of it"
        )
    xn = xp.sqrt((x * x).sum(1, keepdims=True))
    yn = xp.sqrt((y * y).sum(1, keepdims=True))
    return {"Out": (x * y).sum(1, keepdims=True) / (xn * yn), "XNorm": xn, "YNorm": yn}


@kernel("cos_sim_grad", FLOATS, wants_outputs=True)
def cos_sim_grad(inputs, attrs, wanted):
    x0, y0 = inputs["X"], inputs["Y"]
    x, y = _rows(x0), _rows(y0)
    out, xn, yn, d = (
        inputs["Out"],
        inputs["XNorm"],
        inputs["YNorm"],
        inputs["Out@GRAD"].reshape(-1, 1),
    )
    res = {}
    if "X@GRAD" in wanted:
        res["X@GRAD"] = (d * (y / (xn * yn) - out * x / (xn * xn))).reshape(x0.shape)
    if "Y@GRAD" in wanted:
        dy = d * (x / (xn * yn) - out * y / (yn * yn))
        res["Y@GRAD"] = reduce_to(dy, y.shape).reshape(y0.shape)
    return res


@kernel("label_smooth", FLOATS)
def label_smooth(inputs, attrs):
    x = inputs["X"]
    eps = x.dtype.type(attrs["epsilon"])
    prior = inputs.get("PriorDist")
    if prior is None:
        return {"Out": (1 - eps) * x + eps / x.shape[-1]}
    if prior.size != x.shape[-1]:
        raise ValueError(
            f"label_smooth: PriorDist of shape {list(prior.shape)} must hold one probability per "
            f"class of X {list(x.shape)} ({x.shape[-1]})"
        )
    return {"Out": (1 - eps) * x + eps * prior.reshape(-1)}


@kernel("label_smooth_grad", FLOATS)
def label_smooth_grad(inputs, attrs):
    d = inputs["Out@GRAD"]
    return {"X@GRAD": d * d.dtype.type(1 - attrs["epsilon"])}


@kernel("reverse")
def reverse(inputs, attrs):
    x = inputs["X"]
    return {"Out": xp.flip(x, tuple(a % x.ndim for a in attrs["axis"]))}


@kernel("roll")
def roll(inputs, attrs):
    x = inputs["X"]
    if not attrs["dims"]:
        return {"Out": xp.roll(x.reshape(-1), attrs["shifts"][0]).reshape(x.shape)}
    return {"Out": xp.roll(x, attrs["shifts"], axis=tuple(attrs["dims"]))}


@kernel("multiplex")
def multiplex(inputs, attrs):
    xs, ids = inputs["X"], inputs["Ids"].reshape(-1)
    if ids.size and (ids.min() < 0 or ids.max() >= len(xs)):
        raise ValueError(
            f"multiplex: Ids hold {ids[(ids < 0) | (ids >= len(xs))][:5].tolist()}, outside [0, {len(xs)})"
        )
    stacked = xp.stack(xs)  # [k, N, ...]
    return {"Out": stacked[ids, xp.arange(len(ids))]}


@kernel("multiplex_grad")
def multiplex_grad(inputs, attrs):
    xs, ids, d = inputs["X"], inputs["Ids"].reshape(-1), inputs["Out@GRAD"]
    mask_shape = (-1,) + (1,) * (d.ndim - 1)
    return {
        "X@GRAD": [
            xp.where((ids == k).reshape(mask_shape), d, 0).astype(d.dtype, copy=False)
            for k in range(len(xs))
        ]
    }


@kernel("eye")
def eye(inputs, attrs):
    rows, cols = attrs["num_rows"], attrs["num_columns"]
    return {"Out": xp.eye(rows, rows if cols == -1 else cols, dtype=attrs["dtype"])}


@kernel("diag")
def diag(inputs, attrs):
    return {"Out": xp.diag(inputs["Diagonal"])}


@kernel("unique")
def unique(inputs, attrs):
    """Unique values in order of first appearance, and each element's position among them."""
    x = inputs["X"]
    vals, first, inverse = xp.unique(x, return_index=True, return_inverse=True)
    order = xp.argsort(first, kind="stable")
    rank = xp.empty_like(order)
    rank[order] = xp.arange(len(order))
    return {"Out": vals[order], "Index": rank[inverse.reshape(-1)].astype(attrs["dtype"])}


@kernel("unique_with_counts")
def unique_with_counts(inputs, attrs):
    res = unique(inputs, attrs)
    counts = xp.bincount(res["Index"].astype(np.int64), minlength=len(res["Out"]))
    res["Count"] = counts.astype(attrs["dtype"])
    return res


@kernel("shard_index")
def shard_index(inputs, attrs):
    """Ids of shard ``shard_id`` become local ids (id % shard_size); others become ``ignore_value``."""
    x = inputs["X"]
    size_ = (attrs["index_num"] + attrs["nshards"] - 1) // attrs["nshards"]
    mine = x // size_ == attrs["shard_id"]
    return {"Out": xp.where(mine, x % size_, attrs["ignore_value"]).astype(x.dtype, copy=False)}


@kernel("size")
def size(inputs, attrs):
    return {"Out": xp.array([xp.size(inputs["Input"])], dtype=np.int64)}


kernel("isfinite")(lambda inputs, attrs: {"Out": xp.array([bool(xp.isfinite(inputs["X"]).all())])})
kernel("isinf")(lambda inputs, attrs: {"Out": xp.array([bool(xp.isinf(inputs["X"]).any())])})
kernel("isnan")(lambda inputs, attrs: {"Out": xp.array([bool(xp.isnan(inputs["X"]).any())])})
