"""numpy kernels for pixel_shuffle, shuffle_channel, crop_tensor, pad_constant_like, tril_triu,
scatter_nd_add and randint."""

from __future__ import annotations

import numpy as np

from oar_kernels_cpu.kernels import array_module, kernel
from oar_kernels_cpu.kernels._util import rng_for, scatter_add

xp = array_module(__name__)


@kernel("pixel_shuffle")
def pixel_shuffle(inputs, attrs):
    x, r = inputs["X"], attrs["upscale_factor"]
    n, c, h, w = x.shape
    out = x.reshape(n, c // (r * r), r, r, h, w).transpose(0, 1, 4, 2, 5, 3)
    return {"Out": out.reshape(n, c // (r * r), h * r, w * r)}


@kernel("pixel_shuffle_grad")
def pixel_shuffle_grad(inputs, attrs):
    d, r = inputs["Out@GRAD"], attrs["upscale_factor"]
    n, c, hr, wr = d.shape
    h, w = hr // r, wr // r
    dx = d.reshape(n, c, h, r, w, r).transpose(0, 1, 3, 5, 2, 4)
    return {"X@GRAD": dx.reshape(n, c * r * r, h, w)}


def _shuffle(x, g):
    n, c, h, w = x.shape
    return x.reshape(n, g, c // g, h, w).transpose(0, 2, 1, 3, 4).reshape(n, c, h, w)


@kernel("shuffle_channel")
def shuffle_channel(inputs, attrs):
    return {"Out": _shuffle(inputs["X"], attrs["group"])}


@kernel("shuffle_channel_grad")
def shuffle_channel_grad(inputs, attrs):
    d = inputs["Out@GRAD"]
    return {"X@GRAD": _shuffle(d, d.shape[1] // attrs["group"])}  # the inverse permutation


def _ints(inputs, attrs, name):
    key = name.capitalize()
    if inputs.get(key) is not None:
        return [int(v) for v in xp.asarray(inputs[key]).reshape(-1)]
    if inputs.get(key + "Tensor"):
        return [int(xp.asarray(t).reshape(-1)[0]) for t in inputs[key + "Tensor"]]
    return list(attrs[name])


def _crop_index(inputs, attrs, shape):
    sizes = _ints(inputs, attrs, "shape")
    offsets = _ints(inputs, attrs, "offsets") or [0] * len(shape)
    idx = []
    for d, s, o in zip(shape, sizes, offsets):
        s = d - o if s == -1 else s
        if o < 0 or o + s > d:
            raise ValueError(
                f"crop_tensor: a crop of size {s} at offset {o} does not fit a dim of size {d}"
            )
        idx.append(slice(o, o + s))
    return tuple(idx)


@kernel("crop_tensor")
def crop_tensor(inputs, attrs):
    x = inputs["X"]
    return {"Out": x[_crop_index(inputs, attrs, x.shape)]}


@kernel("crop_tensor_grad")
def crop_tensor_grad(inputs, attrs):
    x, d = inputs["X"], inputs["Out@GRAD"]
    offsets = _ints(inputs, attrs, "offsets") or [0] * x.ndim
    dx = xp.zeros_like(x)
    dx[tuple(slice(o, o + s) for o, s in zip(offsets, d.shape))] = d
    return {"X@GRAD": dx}


@kernel("pad_constant_like")
def pad_constant_like(inputs, attrs):
    x, y = inputs["X"], inputs["Y"]
    return {
        "Out": xp.pad(
            y, [(0, a - b) for a, b in zip(x.shape, y.shape)], constant_values=attrs["pad_value"]
        )
    }


@kernel("pad_constant_like_grad")
def pad_constant_like_grad(inputs, attrs):
    y, d = inputs["Y"], inputs["Out@GRAD"]
    return {"Y@GRAD": d[tuple(slice(0, n) for n in y.shape)]}


def _tri_mask(shape, attrs):
    rows, cols = shape[-2:]
    k = attrs["diagonal"]
    return (
        xp.tri(rows, cols, k, dtype=bool)
        if attrs["lower"]
        else ~xp.tri(rows, cols, k - 1, dtype=bool)
    )


@kernel("tril_triu")
def tril_triu(inputs, attrs):
    x = inputs["X"]
    return {"Out": xp.where(_tri_mask(x.shape, attrs), x, 0).astype(x.dtype, copy=False)}


@kernel("tril_triu_grad")
def tril_triu_grad(inputs, attrs):
    d = inputs["Out@GRAD"]
    return {"X@GRAD": xp.where(_tri_mask(d.shape, attrs), d, 0).astype(d.dtype, copy=False)}


def _nd(idx, x_shape):
    k = idx.shape[-1]
    flat = idx.reshape(-1, k).astype(np.int64, copy=False)
    bad = (flat < 0) | (flat >= xp.asarray(x_shape[:k]))
    if bad.any():
        raise ValueError(
            f"scatter_nd_add: Index rows {flat[bad.any(1)][:3].tolist()} fall outside X's dims "
            f"{list(x_shape[:k])}"
        )
    return tuple(xp.moveaxis(idx.astype(np.int64, copy=False), -1, 0))


@kernel("scatter_nd_add")
def scatter_nd_add(inputs, attrs):
    x, idx, up = inputs["X"], inputs["Index"], inputs["Updates"]
    out = x.copy()
    scatter_add(xp, out, _nd(idx, x.shape), up)
    return {"Out": out}


@kernel("scatter_nd_add_grad", wants_outputs=True)
def scatter_nd_add_grad(inputs, attrs, wanted):
    x, idx, d = inputs["X"], inputs["Index"], inputs["Out@GRAD"]
    res = {}
    if "X@GRAD" in wanted:
        res["X@GRAD"] = d
    if "Updates@GRAD" in wanted:
        res["Updates@GRAD"] = d[_nd(idx, x.shape)]
    return res


@kernel("randint")
def randint(inputs, attrs):
    if inputs.get("ShapeTensor") is not None:
        shape = [int(v) for v in xp.asarray(inputs["ShapeTensor"]).reshape(-1)]
    elif inputs.get("ShapeTensorList"):
        shape = [int(xp.asarray(t).reshape(-1)[0]) for t in inputs["ShapeTensorList"]]
    else:
        shape = list(attrs["shape"])
    out = rng_for(xp, attrs["seed"]).integers(attrs["low"], attrs["high"], shape)
    return {"Out": out.astype(attrs["dtype"])}
