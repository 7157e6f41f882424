"""numpy kernels for scale, sum and mean."""

from __future__ import annotations

import numpy as np
from oar.api import SelectedRows

from oar_kernels_cpu.kernels import array_module, kernel
from oar_kernels_cpu.kernels._util import scatter_add

xp = array_module(__name__)


@kernel("scale")
def scale(inputs, attrs):
    x = inputs["X"]
    s = attrs["scale"]
    st = inputs.get("ScaleTensor")
    if st is not None:
        s = float(xp.asarray(st).reshape(-1)[0])
    b = attrs["bias"]
    out = x * s + b if attrs["bias_after_scale"] else (x + b) * s
    return {"Out": out if out.dtype == x.dtype else out.astype(x.dtype)}


@kernel("sum", selected_rows=True)
def sum_(inputs, attrs):
    xs = [x for x in inputs["X"] if x is not None]
    dense = [x for x in xs if not isinstance(x, SelectedRows)]
    sparse = [x for x in xs if isinstance(x, SelectedRows)]
    if sparse and not dense:
        rows = xp.concatenate([s.row_array for s in sparse])
        value = xp.concatenate([xp.asarray(s.value) for s in sparse])
        return {"Out": SelectedRows(rows, sparse[0].height(), value)}
    for i, x in enumerate(dense[1:], 1):
        if x.shape != dense[0].shape:
            raise ValueError(
                f"sum: X[{i}] has shape {list(x.shape)}, X[0] has {list(dense[0].shape)}; "
                f"all inputs must have the same shape (nothing is broadcast)"
            )
    out = dense[0].copy() if len(dense) == 1 else xp.add(dense[0], dense[1])
    for x in dense[2:]:
        out += x
    for s in sparse:
        scatter_add(xp, out, xp.asarray(s.row_array), xp.asarray(s.value))
    return {"Out": out}


@kernel("mean")
def mean(inputs, attrs):
    x = inputs["X"]
    # what x.mean(dtype=x.dtype) computes, without its Python-level wrapper
    total = xp.add.reduce(x, axis=None, dtype=x.dtype)
    out = xp.empty(1, dtype=x.dtype)
    out[0] = total / max(x.size, 1) if x.size else np.nan
    return {"Out": out}


@kernel("mean_grad", no_need_buffer=("X",))
def mean_grad(inputs, attrs):
    x = inputs["X"]
    d = inputs["Out@GRAD"].reshape(-1)[0]
    out = xp.empty(x.shape, dtype=x.dtype)
    out.fill(d / max(x.size, 1))
    return {"X@GRAD": out}


@kernel("assign", selected_rows=True)
def assign(inputs, attrs):
    x = inputs["X"]
    return {"Out": x.copy() if hasattr(x, "copy") else x}
