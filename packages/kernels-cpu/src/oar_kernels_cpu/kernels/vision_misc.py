"""Kernels of space_to_depth, temporal_shift, unfold, fsp, crop, bilinear_tensor_product."""

from __future__ import annotations

from oar_kernels_cpu.kernels import FLOATS, NUMERIC, _gemm, array_module, kernel
from oar_kernels_cpu.kernels._im2col import col2im_batched, pad_nchw, windows

xp = array_module(__name__)


# --- space_to_depth: Fluid's Darknet "reorg" order, a pure reshape/transpose -------------------
def _s2d(x, b):
    n, c, h, w = x.shape
    oc = c // (b * b)
    y = x.reshape(n, b, b, oc, h, w).transpose(0, 3, 4, 1, 5, 2)  # (n, oc, h, b, w, b)
    return xp.ascontiguousarray(y).reshape(n, c * b * b, h // b, w // b)


def _s2d_inverse(y, x_shape, b):
    n, c, h, w = x_shape
    oc = c // (b * b)
    t = y.reshape(n, oc, h, b, w, b).transpose(0, 3, 5, 1, 2, 4)  # (n, b, b, oc, h, w)
    return xp.ascontiguousarray(t).reshape(x_shape)


@kernel("space_to_depth", NUMERIC)
def space_to_depth(inputs, attrs):
    return {"Out": _s2d(inputs["X"], attrs["blocksize"])}


@kernel("space_to_depth_grad", FLOATS)
def space_to_depth_grad(inputs, attrs):
    return {"X@GRAD": _s2d_inverse(inputs["Out@GRAD"], inputs["X"].shape, attrs["blocksize"])}


# --- temporal_shift -----------------------------------------------------------------------
def _shift(x, seg, ratio, sign):
    nt, c = x.shape[:2]
    v = x.reshape((nt // seg, seg) + x.shape[1:])
    c1, c2 = int(c * ratio), int(c * 2 * ratio)
    out = xp.zeros_like(v)
    # channels [0, c1) come from the previous frame, [c1, c2) from the next, the rest stay
    if sign > 0:
        out[:, 1:, :c1] = v[:, :-1, :c1]
        out[:, :-1, c1:c2] = v[:, 1:, c1:c2]
    else:  # the adjoint moves gradients back where the values came from
        out[:, :-1, :c1] = v[:, 1:, :c1]
        out[:, 1:, c1:c2] = v[:, :-1, c1:c2]
    out[:, :, c2:] = v[:, :, c2:]
    return out.reshape(x.shape)


@kernel("temporal_shift", FLOATS)
def temporal_shift(inputs, attrs):
    return {"Out": _shift(inputs["X"], attrs["seg_num"], attrs["shift_ratio"], 1)}


@kernel("temporal_shift_grad", FLOATS)
def temporal_shift_grad(inputs, attrs):
    return {"X@GRAD": _shift(inputs["Out@GRAD"], attrs["seg_num"], attrs["shift_ratio"], -1)}


# --- unfold (im2col) ------------------------------------------------------------------------
def _unfold_geom(x, attrs):
    k, s, p, d = attrs["kernel_sizes"], attrs["strides"], attrs["paddings"], attrs["dilations"]
    pads = (p[0], p[2], p[1], p[3])  # top, bottom, left, right
    h, w = x.shape[2:]
    oh = (h + p[0] + p[2] - (d[0] * (k[0] - 1) + 1)) // s[0] + 1
    ow = (w + p[1] + p[3] - (d[1] * (k[1] - 1) + 1)) // s[1] + 1
    return k, s, d, pads, (oh, ow)


@kernel("unfold", FLOATS)
def unfold(inputs, attrs):
    x = inputs["X"]
    k, s, d, pads, out = _unfold_geom(x, attrs)
    win = windows(xp, pad_nchw(xp, x, pads), k, s, d, out)  # (N, C, KH, KW, OH, OW)
    n, c = x.shape[:2]
    return {"Y": xp.ascontiguousarray(win).reshape(n, c * k[0] * k[1], out[0] * out[1])}


@kernel("unfold_grad", FLOATS)
def unfold_grad(inputs, attrs):
    x, dy = inputs["X"], inputs["Y@GRAD"]
    k, s, d, pads, out = _unfold_geom(x, attrs)
    n, c, h, w = x.shape
    cols = dy.reshape(n, c, k[0], k[1], out[0], out[1])
    full = col2im_batched(xp, cols, (h + pads[0] + pads[1], w + pads[2] + pads[3]), s, d)
    return {
        "X@GRAD": xp.ascontiguousarray(full[:, :, pads[0] : pads[0] + h, pads[2] : pads[2] + w])
    }


# --- fsp: flow-of-solution-procedure matrices ---------------------------------------------------
def _flat(a):
    return a.reshape(a.shape[0], a.shape[1], -1)


@kernel("fsp", FLOATS)
def fsp(inputs, attrs):
    x, y = _flat(inputs["X"]), _flat(inputs["Y"])
    return {"Out": _gemm.matmul(xp, x, y.transpose(0, 2, 1)) / x.shape[2]}


@kernel("fsp_grad", FLOATS, wants_outputs=True)
def fsp_grad(inputs, attrs, wanted):
    x, y, d = inputs["X"], inputs["Y"], inputs["Out@GRAD"]
    hw = _flat(x).shape[2]
    pairs = {"X@GRAD": (d, _flat(y)), "Y@GRAD": (d.transpose(0, 2, 1), _flat(x))}
    slots = [slot for slot in pairs if slot in wanted]  # both products in one call
    prods = _gemm.matmuls(xp, [pairs[slot] for slot in slots]) if slots else []
    shapes = {"X@GRAD": x.shape, "Y@GRAD": y.shape}
    return {slot: (p / hw).reshape(shapes[slot]) for slot, p in zip(slots, prods)}


# --- crop ---------------------------------------------------------------------------------
def _crop_box(inputs, attrs):
    x = inputs["X"]
    shape = list(inputs["Y"].shape) if "Y" in inputs else list(attrs["shape"])
    shape = [x.shape[i] if v == -1 else v for i, v in enumerate(shape)]
    if "Offsets" in inputs:
        offsets = [int(v) for v in xp.asarray(inputs["Offsets"]).reshape(-1)]
    else:
        offsets = list(attrs["offsets"]) or [0] * x.ndim
    for i, (o, s, dim) in enumerate(zip(offsets, shape, x.shape)):
        if o < 0 or o + s > dim:
            raise ValueError(f"crop: dim {i}: offset {o} + size {s} exceeds X's {dim}")
    return tuple(slice(o, o + s) for o, s in zip(offsets, shape))


@kernel("crop", NUMERIC)
def crop(inputs, attrs):
    return {"Out": xp.ascontiguousarray(inputs["X"][_crop_box(inputs, attrs)])}


@kernel("crop_grad", FLOATS)
def crop_grad(inputs, attrs):
    g = xp.zeros_like(inputs["X"])
    g[_crop_box(inputs, attrs)] = inputs["Out@GRAD"]
    return {"X@GRAD": g}


# --- bilinear_tensor_product: out[n, k] = x[n] W[k] y[n] + b[k] --------------------------------
@kernel("bilinear_tensor_product", FLOATS)
def bilinear_tensor_product(inputs, attrs):
    x, y, w = inputs["X"], inputs["Y"], inputs["Weight"]
    out = xp.einsum("ni,kij,nj->nk", x, w, y)
    if inputs.get("Bias") is not None:
        out = out + inputs["Bias"].reshape(1, -1)
    return {"Out": out.astype(x.dtype, copy=False)}


@kernel("bilinear_tensor_product_grad", FLOATS, wants_outputs=True)
def bilinear_tensor_product_grad(inputs, attrs, wanted):
    x, y, w, d = inputs["X"], inputs["Y"], inputs["Weight"], inputs["Out@GRAD"]
    res = {}
    if "X@GRAD" in wanted:
        res["X@GRAD"] = xp.einsum("nk,kij,nj->ni", d, w, y)
    if "Y@GRAD" in wanted:
        res["Y@GRAD"] = xp.einsum("nk,kij,ni->nj", d, w, x)
    if "Weight@GRAD" in wanted:
        res["Weight@GRAD"] = xp.einsum("nk,ni,nj->kij", d, x, y)
    if "Bias@GRAD" in wanted:
        res["Bias@GRAD"] = d.sum(axis=0, keepdims=True)
    return res
