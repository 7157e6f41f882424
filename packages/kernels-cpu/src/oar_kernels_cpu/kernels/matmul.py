"""numpy kernels for mul and matmul: one BLAS call each way.

float16 operands multiply in float32 and round the product to float16 (fp32 accumulation,
as GPU tensor cores do): numpy has no float16 BLAS, and its float16 loops are about a
hundred times slower.

With more than one CPU math thread, a large 2-D product is split into row blocks that the
kernel thread pool (``_parallel.py``) hands out one at a time, each one single-threaded
BLAS call into its rows of the output. Two reasons: OpenBLAS's own threads give results
that differ from its single-threaded ones in the last bits (128x784 @ 784x512: up to 6e-5),
while a row block's product is bit for bit that of the whole product on one thread, so
results no longer depend on the thread count; and OpenBLAS splits the work statically, so
on a busy machine every GEMM waited for whichever of its threads the OS had not scheduled
(the four MLP GEMMs at load 4.5: median 31.9 ms, split 5.0 ms).
"""

from __future__ import annotations

import math

import numpy as np

from oar_kernels_cpu.kernels import FLOATS, array_module, kernel
from oar_kernels_cpu.kernels._parallel import parallel_for, parallel_threads
from oar_kernels_cpu.kernels._util import reduce_to

xp = array_module(__name__)

#: the fewest multiply-adds and rows of a row block. OpenBLAS multiplies products of up to 1e6
#: multiply-adds with other kernels on some CPUs (its "small matrix" path, rounding
#: differently), so every block, like the whole, stays above that.
SPLIT_MIN_MACS = 1 << 20
SPLIT_MIN_ROWS = 16
#: row blocks per thread: more balance the threads when the OS delays one, fewer cost less
BLOCKS_PER_THREAD = 2


def _mm(a, b):
    """``a @ b`` (batched as ``matmul``); float16 through float32."""
    if a.dtype == xp.float16 or b.dtype == xp.float16:
        return xp.matmul(a.astype(xp.float32), b.astype(xp.float32)).astype(xp.float16)
    if xp is np and a.ndim == 2 and b.ndim == 2:  # host arrays only: the pool is CPU threads
        m, k = a.shape
        macs = m * k * b.shape[1]
        if m >= 2 * SPLIT_MIN_ROWS and macs >= 2 * SPLIT_MIN_MACS:
            threads = parallel_threads()
            if threads > 1:
                blocks = min(
                    BLOCKS_PER_THREAD * threads, m // SPLIT_MIN_ROWS, macs // SPLIT_MIN_MACS
                )
                return _row_blocks(a, b, blocks)
    return xp.matmul(a, b)


def _row_blocks(a, b, blocks):
    """``a @ b`` as ``blocks`` row blocks on the kernel thread pool (BLAS on one thread)."""
    m = a.shape[0]
    out = xp.empty((m, b.shape[1]), dtype=xp.result_type(a.dtype, b.dtype))
    bounds = [m * i // blocks for i in range(blocks + 1)]

    def run(i):
        lo, hi = bounds[i], bounds[i + 1]
        xp.matmul(a[lo:hi], b, out=out[lo:hi])

    parallel_for(run, blocks)
    return out


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
    out = {}
    if "X@GRAD" in wanted:
        out["X@GRAD"] = _shaped(_mm(d2, y2.T), x.shape)
    if "Y@GRAD" in wanted:
        out["Y@GRAD"] = _shaped(_mm(x2.T, d2), y.shape)
    return out


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
    res = {}
    if "X@GRAD" in wanted:
        dxe = _mm(d, _t(ye))
        dx = _t(dxe) if tx else dxe
        res["X@GRAD"] = reduce_to(dx, x.shape).reshape(x0.shape)
    if "Y@GRAD" in wanted:
        dye = _mm(_t(xe), d)
        dy = _t(dye) if ty else dye
        res["Y@GRAD"] = reduce_to(dy, y.shape).reshape(y0.shape)
    return res
