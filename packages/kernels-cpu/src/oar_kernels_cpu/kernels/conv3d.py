"""conv3d and conv3d_transpose: vol2col + one batched GEMM per direction.

The products go through ``_gemm`` like mul's: oar's thread settings apply to them, and under
``FLAGS_cpu_deterministic`` their results do not depend on the thread count. The filter is
broadcast over the batch (a view, nothing copied) so that ``_gemm`` sees the whole product's
size and can cut it into per-image pieces."""

from __future__ import annotations

from oar.api import conv3d_geometry, conv3d_transpose_geometry

from oar_kernels_cpu.kernels import FLOATS, _gemm, array_module, kernel
from oar_kernels_cpu.kernels._vol2col import col2vol, crop_nd, vol2col

xp = array_module(__name__)


def _first(x, attrs):
    return xp.moveaxis(x, -1, 1) if attrs["data_format"] == "NDHWC" else x


def _back(y, attrs):
    return xp.ascontiguousarray(xp.moveaxis(y, 1, -1)) if attrs["data_format"] == "NDHWC" else y


def _padded(size, pads):
    return tuple(v + pads[2 * i] + pads[2 * i + 1] for i, v in enumerate(size))


def _per_image(w, n):
    """The filter matrices ``w`` (g, ., .) as a read-only (n, g, ., .) view."""
    return xp.broadcast_to(w, (n,) + w.shape)


def _forward_pair(cols, w, g):
    """The product of conv3d: filter (n, g, O/g, C/g*K) by columns (n, g, C/g*K, L)."""
    n = cols.shape[0]
    wg = _per_image(w.reshape(g, w.shape[0] // g, -1), n)
    return wg, cols.reshape(n, g, -1, cols.shape[-1])


def _forward(x, w, g, k, s, d, pads, out):
    """conv3d of channels-first ``x`` by ``w`` (O, C/g, *K): (N, O, *out)."""
    cols = vol2col(xp, x, k, s, d, pads, out)
    y = _gemm.matmul(xp, *_forward_pair(cols, w, g))
    return y.reshape((x.shape[0], w.shape[0]) + tuple(out)), cols


def _adjoint_pair(dy, w, g):
    """The product of :func:`_adjoint`: filter^T (n, g, C/g*K, O/g) by dy (n, g, O/g, L)."""
    n, oc = dy.shape[:2]
    wt = xp.swapaxes(w.reshape(g, oc // g, -1), -1, -2)
    return _per_image(wt, n), dy.reshape(n, g, oc // g, -1)


def _adjoint_finish(dcols, in_shape, k, out, s, d, pads):
    """The input gradient from its column gradient (n, g, C/g*K, L): col2vol, cropped."""
    dcols = dcols.reshape((in_shape[0], in_shape[1]) + tuple(k) + tuple(out))
    full = col2vol(xp, dcols, _padded(in_shape[2:], pads), s, d)
    return xp.ascontiguousarray(crop_nd(full, pads))


def _adjoint(dy, w, g, in_shape, k, s, d, pads):
    """The input gradient of :func:`_forward` (a transposed convolution of ``dy``)."""
    dcols = _gemm.matmul(xp, *_adjoint_pair(dy, w, g))
    return _adjoint_finish(dcols, in_shape, k, dy.shape[2:], s, d, pads)


def _filter_pair(cols, dy, g):
    """The product of dW: dy (n, g, O/g, L) by the columns^T (n, g, L, C/g*K)."""
    n, oc = dy.shape[:2]
    colr = cols.reshape(n, g, -1, cols.shape[-1])
    return dy.reshape(n, g, oc // g, -1), xp.swapaxes(colr, -1, -2)


def _gradients(wanted, pairs):
    """``{slot: product}`` of the wanted slots' products, computed in one ``_gemm.matmuls``
    call (independent products run at once)."""
    slots = [slot for slot in pairs if slot in wanted]
    return dict(zip(slots, _gemm.matmuls(xp, [pairs[slot]() for slot in slots]))) if slots else {}


@kernel("conv3d", FLOATS)
def conv3d(inputs, attrs):
    x, w = _first(inputs["Input"], attrs), inputs["Filter"]
    k = w.shape[2:]
    pads, d, out = conv3d_geometry(x.shape[2:], k, attrs)
    y, _ = _forward(x, w, attrs["groups"], k, attrs["strides"], d, pads, out)
    return {"Output": _back(y.astype(x.dtype, copy=False), attrs)}


@kernel("conv3d_grad", FLOATS, wants_outputs=True)
def conv3d_grad(inputs, attrs, wanted):
    x, w = _first(inputs["Input"], attrs), inputs["Filter"]
    dy = _first(inputs["Output@GRAD"], attrs)
    g, k, s = attrs["groups"], w.shape[2:], attrs["strides"]
    pads, d, out = conv3d_geometry(x.shape[2:], k, attrs)
    prods = _gradients(
        wanted,
        {
            "Filter@GRAD": lambda: _filter_pair(vol2col(xp, x, k, s, d, pads, out), dy, g),
            "Input@GRAD": lambda: _adjoint_pair(dy, w, g),
        },
    )
    res = {}
    if "Filter@GRAD" in prods:
        res["Filter@GRAD"] = prods["Filter@GRAD"].sum(axis=0).reshape(w.shape)
    if "Input@GRAD" in prods:
        dx = _adjoint_finish(prods["Input@GRAD"], x.shape, k, out, s, d, pads)
        res["Input@GRAD"] = _back(dx, attrs)
    return res


@kernel("conv3d_transpose", FLOATS)
def conv3d_transpose(inputs, attrs):
    # y = A^T x, A the conv3d from C_out to C_in channels whose filter is w (C_in, C_out/g, *K)
    x, w = _first(inputs["Input"], attrs), inputs["Filter"]
    g, k = attrs["groups"], w.shape[2:]
    pads, d, out = conv3d_transpose_geometry(x.shape[2:], k, attrs)
    shape = (x.shape[0], g * w.shape[1]) + tuple(out)
    y = _adjoint(x, w, g, shape, k, attrs["strides"], d, pads)
    return {"Output": _back(y.astype(x.dtype, copy=False), attrs)}


@kernel("conv3d_transpose_grad", FLOATS, wants_outputs=True)
def conv3d_transpose_grad(inputs, attrs, wanted):
    x, w = _first(inputs["Input"], attrs), inputs["Filter"]
    dy = _first(inputs["Output@GRAD"], attrs)
    g, k, s = attrs["groups"], w.shape[2:], attrs["strides"]
    pads, d, _ = conv3d_transpose_geometry(x.shape[2:], k, attrs)
    cols = vol2col(xp, dy, k, s, d, pads, x.shape[2:])
    prods = _gradients(
        wanted,
        {
            "Input@GRAD": lambda: _forward_pair(cols, w, g),  # dX = A dy
            "Filter@GRAD": lambda: _filter_pair(cols, x, g),
        },
    )
    res = {}
    if "Input@GRAD" in prods:
        dx = prods["Input@GRAD"].reshape(x.shape)
        res["Input@GRAD"] = _back(dx.astype(x.dtype, copy=False), attrs)
    if "Filter@GRAD" in prods:
        res["Filter@GRAD"] = prods["Filter@GRAD"].sum(axis=0).reshape(w.shape)
    return res
