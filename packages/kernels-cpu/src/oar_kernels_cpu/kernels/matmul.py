"""numpy kernels for mul and matmul: one BLAS product each way (``_gemm.matmul``: at one BLAS
thread, split across the kernel thread pool when large).

float16 operands multiply in float32 and round the product to float16 (fp32 accumulation,
as GPU tensor cores do): numpy has no float16 BLAS, and its float16 loops are about a
hundred times slower.
"""

from __future__ import annotations

import math

from oar_kernels_cpu.kernels import FLOATS, _gemm, array_module, kernel
from oar_kernels_cpu.kernels._util import reduce_to

xp = array_module(__name__)


def _mm(a, b):
    """``a @ b`` (batched as ``matmul``); float16 through float32."""
    # the common small case first, with no helper call: a float operand of two bytes is
    # float16 (cheaper to test than the dtype); b.shape[-1] overstates a matrix-vector product
    if a.itemsize != 2 != b.itemsize and a.size * b.shape[-1] < _gemm.BLAS_SERIAL_MACS:
        return xp.matmul(a, b)
    return _mms((a, b))[0]


def _mms(*pairs):
    """``[a @ b for a, b in pairs]``, computed together (``_gemm.matmuls``); float16 through
    float32."""
    for a, b in pairs:
        if a.itemsize == 2 or b.itemsize == 2 or a.size * b.shape[-1] >= _gemm.BLAS_SERIAL_MACS:
            break
    else:
        return [xp.matmul(a, b) for a, b in pairs]
    half = [a.dtype == xp.float16 or b.dtype == xp.float16 for a, b in pairs]
    pairs = [
        (a.astype(xp.float32), b.astype(xp.float32)) if h else (a, b)
        for h, (a, b) in zip(half, pairs)
    ]
    out = _gemm.matmuls(xp, pairs)
    return [o.astype(xp.float16) if h else o for h, o in zip(half, out)]


def _flat(a, n):
    if a.ndim == 2 and n == 1:
        return a
    return a.reshape(math.prod(a.shape[:n]), -1)


@kernel("mul", FLOATS)
def mul(inputs, attrs):
    x, y = inputs["X"], inputs["Y"]
    xn, yn = attrs["x_num_col_dims"], attrs["y_num_col_dims"]
    x2, y2 = _flat(x, xn), _flat(y, yn)
    if x2.shape[1] != y2.shape[0]:
        raise ValueError(
            f"mul: X {list(x.shape)} flattened to {list(x2.shape)} (x_num_col_dims={xn}) and Y "
            f"{list(y.shape)} flattened to {list(y2.shape)} (y_num_col_dims={yn}) do not multiply: "
            f"{x2.shape[1]} columns vs {y2.shape[0]} rows"
        )
    out = _mm(x2, y2)
    if x.ndim != 2 or y.ndim != 2:
        out = out.reshape(x.shape[:xn] + y.shape[yn:])
    return {"Out": out}


@kernel("mul_grad", FLOATS, wants_outputs=True)
def mul_grad(inputs, attrs, wanted):
    x, y, d = inputs["X"], inputs["Y"], inputs["Out@GRAD"]
    xn, yn = attrs["x_num_col_dims"], attrs["y_num_col_dims"]
    x2, y2 = _flat(x, xn), _flat(y, yn)
    d2 = d.reshape(x2.shape[0], y2.shape[1])
    want_x, want_y = "X@GRAD" in wanted, "Y@GRAD" in wanted
    if want_x and want_y:
        dx, dy = _mms((d2, y2.T), (x2.T, d2))  # dX and dW at once on the kernel pool
    else:  # one product: no pairing helpers (a per-step cost on small models)
        dx = _mm(d2, y2.T) if want_x else None
        dy = _mm(x2.T, d2) if want_y else None
    grads = {}
    if dx is not None:
        grads["X@GRAD"] = _shaped(dx, x.shape)
    if dy is not None:
        grads["Y@GRAD"] = _shaped(dy, y.shape)
    return grads


def _shaped(a, shape):
    # a fresh result keeps owning its buffer (no view), so later ops may reuse it in place
    return a if a.shape == shape else a.reshape(shape)


def _t(a):
    return xp.swapaxes(a, -1, -2)


@kernel("matmul", FLOATS)
def matmul(inputs, attrs):
    x, y = inputs["X"], inputs["Y"]
    if attrs["transpose_X"] and x.ndim > 1:
        x = _t(x)
    if attrs["transpose_Y"] and y.ndim > 1:
        y = _t(y)
    try:
        out = _mm(x, y)
    except ValueError:
        k_y = y.shape[0 if y.ndim == 1 else -2]
        why = (
            f"X's last dim {x.shape[-1]} must equal Y's {'first' if y.ndim == 1 else 'second-to-last'} "
            f"dim {k_y}"
            if x.shape[-1] != k_y
            else f"the batch dims {list(x.shape[:-2])} and {list(y.shape[:-2])} do not broadcast"
        )
        raise ValueError(
            f"matmul: X {list(inputs['X'].shape)} (transpose_X={attrs['transpose_X']}) and Y "
            f"{list(inputs['Y'].shape)} (transpose_Y={attrs['transpose_Y']}) do not multiply: "
            f"{why}"
        ) from None
    if attrs["alpha"] != 1.0:
        out = out * xp.asarray(attrs["alpha"], out.dtype)
    if out.ndim == 0:
        out = out.reshape(1)
    return {"Out": out}


@kernel("matmul_grad", FLOATS, wants_outputs=True)
def matmul_grad(inputs, attrs, wanted):
    x0, y0, d = inputs["X"], inputs["Y"], inputs["Out@GRAD"]
    tx, ty, alpha = attrs["transpose_X"], attrs["transpose_Y"], attrs["alpha"]
    x = x0.reshape(1, -1) if x0.ndim == 1 else x0
    y = y0.reshape(-1, 1) if y0.ndim == 1 else y0
    xe = _t(x) if tx else x
    ye = _t(y) if ty else y
    out_shape = xp.broadcast_shapes(xe.shape[:-2], ye.shape[:-2]) + (xe.shape[-2], ye.shape[-1])
    d = d.reshape(out_shape)
    if alpha != 1.0:
        d = d * xp.asarray(alpha, d.dtype)
    slots = [s for s in ("X@GRAD", "Y@GRAD") if s in wanted]
    products = {"X@GRAD": (d, _t(ye)), "Y@GRAD": (_t(xe), d)}
    grads = dict(zip(slots, _mms(*(products[s] for s in slots))))
    res = {}
    if "X@GRAD" in grads:
        dx = _t(grads["X@GRAD"]) if tx else grads["X@GRAD"]
        res["X@GRAD"] = reduce_to(dx, x.shape).reshape(x0.shape)
    if "Y@GRAD" in grads:
        dy = _t(grads["Y@GRAD"]) if ty else grads["Y@GRAD"]
        res["Y@GRAD"] = reduce_to(dy, y.shape).reshape(y0.shape)
    return res
