"""numpy kernels for slice, strided_slice, gather, gather_nd, scatter, pad and pad2d."""

from __future__ import annotations

import numpy as np
from oar.api import slice_bounds, strided_bounds

from oar_kernels_cpu.kernels import _gemm, array_module, kernel
from oar_kernels_cpu.kernels._util import scatter_add

xp = array_module(__name__)


def _vals(inputs, attrs, name):
    """starts/ends/strides from the tensor input, the tensor list, or the attr."""
    key = name.capitalize()
    if inputs.get(key + "Tensor") is not None:
        return [int(v) for v in xp.asarray(inputs[key + "Tensor"]).reshape(-1)]
    if inputs.get(key + "TensorList"):
        return [int(xp.asarray(t).reshape(-1)[0]) for t in inputs[key + "TensorList"]]
    return list(attrs[name])


def _slice_index(inputs, attrs, shape, strided):
    idx = [slice(None)] * len(shape)
    starts, ends = _vals(inputs, attrs, "starts"), _vals(inputs, attrs, "ends")
    strides = _vals(inputs, attrs, "strides") if strided else [1] * len(starts)
    for a, s, e, st in zip(attrs["axes"], starts, ends, strides):
        if strided:
            idx[a] = strided_bounds(s, e, st)
        else:
            s, e = slice_bounds(shape[a], s, e)
            idx[a] = slice(s, e)
    return tuple(idx)


def _drop(out, attrs):
    dec = attrs["decrease_axis"]
    if not dec:
        return out
    shape = [d for i, d in enumerate(out.shape) if i not in dec]
    return out.reshape(shape or [1])


def _slicer(strided):
    def forward(inputs, attrs):
        x = inputs["Input"]
        return {"Out": _drop(x[_slice_index(inputs, attrs, x.shape, strided)], attrs)}

    def backward(inputs, attrs):
        x, d = inputs["Input"], inputs["Out@GRAD"]
        idx = _slice_index(inputs, attrs, x.shape, strided)
        dx = xp.zeros_like(x)
        dx[idx] = d.reshape(dx[idx].shape)
        return {"Input@GRAD": dx}

    return forward, backward


for _op, _strided in (("slice", False), ("strided_slice", True)):
    _f, _b = _slicer(_strided)
    kernel(_op)(_f)
    kernel(_op + "_grad")(_b)


def _index(idx, n, op):
    flat = idx.reshape(-1).astype(np.int64, copy=False)
    if flat.size and (flat.min() < -n or flat.max() >= n):
        raise ValueError(
            f"{op}: index values {flat[(flat < -n) | (flat >= n)][:5].tolist()} are out of range for "
            f"a dim of size {n}"
        )
    return flat


@kernel("gather")
def gather(inputs, attrs):
    x = inputs["X"]
    return {"Out": x[_index(inputs["Index"], x.shape[0], "gather")]}


@kernel("gather_grad")
def gather_grad(inputs, attrs):
    x, d = inputs["X"], inputs["Out@GRAD"]
    dx = xp.zeros_like(x)
    idx = _index(inputs["Index"], x.shape[0], "gather")
    if attrs.get("overwrite", True):
        # Fluid 1.8.5: a row gathered more than once gets the gradient of its last use
        idx = idx.reshape(-1) % x.shape[0]
        rows, first_in_reversed = xp.unique(idx[::-1], return_index=True)
        dx[rows] = d[idx.size - 1 - first_in_reversed]
    else:
        scatter_add(xp, dx, idx, d)
    return {"X@GRAD": dx}


def _nd(x, idx):
    k = idx.shape[-1]
    for j in range(k):
        col = idx[..., j]
        if col.size and (col.min() < -x.shape[j] or col.max() >= x.shape[j]):
            raise ValueError(f"gather_nd: Index column {j} holds values outside [0, {x.shape[j]})")
    return tuple(xp.moveaxis(idx.astype(np.int64, copy=False), -1, 0))


@kernel("gather_nd")
def gather_nd(inputs, attrs):
    x, idx = inputs["X"], inputs["Index"]
    out = x[_nd(x, idx)]
    return {"Out": out if out.ndim else out.reshape(1)}


@kernel("gather_nd_grad")
def gather_nd_grad(inputs, attrs):
    x, idx, d = inputs["X"], inputs["Index"], inputs["Out@GRAD"]
    dx = xp.zeros_like(x)
    target = idx.shape[:-1] + x.shape[idx.shape[-1] :]
    scatter_add(xp, dx, _nd(x, idx), d.reshape(target))
    return {"X@GRAD": dx}


@kernel("scatter")
def scatter(inputs, attrs):
    x, up = inputs["X"], inputs["Updates"]
    ids = _index(inputs["Ids"], x.shape[0], "scatter")
    out = x.copy()
    if attrs["overwrite"]:
        last = len(ids) - 1 - xp.unique(ids[::-1], return_index=True)[1]
        out[ids[last]] = up[last]  # repeated ids: the last update wins (a GPU's order is unset)
    else:
        out[ids] = 0
        scatter_add(xp, out, ids, up)
    return {"Out": out}


@kernel("scatter_grad", wants_outputs=True)
def scatter_grad(inputs, attrs, wanted):
    d = inputs["Out@GRAD"]
    ids = _index(inputs["Ids"], d.shape[0], "scatter")
    res = {}
    if "X@GRAD" in wanted:
        dx = d.copy()
        dx[ids] = 0
        res["X@GRAD"] = dx
    if "Updates@GRAD" in wanted:
        du = d[ids]
        if attrs["overwrite"]:  # only the last write of a repeated id reaches Out
            last = len(ids) - 1 - xp.unique(ids[::-1], return_index=True)[1]
            keep = xp.zeros(len(ids), dtype=bool)
            keep[last] = True
            du[~keep] = 0
        res["Updates@GRAD"] = du
    return res


def _pairs(p):
    return [(p[2 * i], p[2 * i + 1]) for i in range(len(p) // 2)]


@kernel("pad")
def pad(inputs, attrs):
    x = inputs["X"]
    return {"Out": xp.pad(x, _pairs(attrs["paddings"]), constant_values=attrs["pad_value"])}


@kernel("pad_grad")
def pad_grad(inputs, attrs):
    x, d = inputs["X"], inputs["Out@GRAD"]
    idx = tuple(slice(b, b + n) for (b, _), n in zip(_pairs(attrs["paddings"]), x.shape))
    return {"X@GRAD": d[idx]}


def _pad2d_setup(inputs, attrs, shape):
    p = attrs["paddings"]
    if inputs.get("Paddings") is not None:
        p = [int(v) for v in xp.asarray(inputs["Paddings"]).reshape(-1)]
    h, w = (2, 3) if attrs["data_format"] == "NCHW" else (1, 2)
    return p, h, w


def _source_index(n, before, after, mode):
    """For each padded position, the input position it copies (reflect / edge)."""
    pos = xp.arange(-before, n + after)
    if mode == "edge":
        return xp.clip(pos, 0, n - 1)
    period = 2 * (n - 1) if n > 1 else 1
    pos = xp.abs(pos) % period
    return xp.where(pos >= n, period - pos, pos)


@kernel("pad2d")
def pad2d(inputs, attrs):
    x = inputs["X"]
    p, h, w = _pad2d_setup(inputs, attrs, x.shape)
    if attrs["mode"] == "constant":
        width = [(0, 0)] * 4
        width[h], width[w] = (p[0], p[1]), (p[2], p[3])
        return {"Out": xp.pad(x, width, constant_values=attrs["pad_value"])}
    ih = _source_index(x.shape[h], p[0], p[1], attrs["mode"])
    iw = _source_index(x.shape[w], p[2], p[3], attrs["mode"])
    return {"Out": xp.take(xp.take(x, ih, axis=h), iw, axis=w)}


@kernel("pad2d_grad")
def pad2d_grad(inputs, attrs):
    x, d = inputs["X"], inputs["Out@GRAD"]
    p, h, w = _pad2d_setup(inputs, attrs, x.shape)
    if attrs["mode"] == "constant":
        idx = [slice(None)] * 4
        idx[h] = slice(p[0], p[0] + x.shape[h])
        idx[w] = slice(p[2], p[2] + x.shape[w])
        return {"X@GRAD": d[tuple(idx)]}
    # each padded position adds its gradient to its source: two small 0/1 matrices, two GEMMs
    ih = _source_index(x.shape[h], p[0], p[1], attrs["mode"])
    iw = _source_index(x.shape[w], p[2], p[3], attrs["mode"])
    mh = xp.zeros((len(ih), x.shape[h]), dtype=d.dtype)
    mh[xp.arange(len(ih)), ih] = 1
    mw = xp.zeros((len(iw), x.shape[w]), dtype=d.dtype)
    mw[xp.arange(len(iw)), iw] = 1
    dn = d if h == 2 else xp.moveaxis(d, 3, 1)  # NHWC -> NCHW view
    dx = _gemm.matmul(xp, _gemm.matmul(xp, xp.swapaxes(mh, 0, 1), dn), mw)
    return {"X@GRAD": dx if h == 2 else xp.moveaxis(dx, 1, 3)}
