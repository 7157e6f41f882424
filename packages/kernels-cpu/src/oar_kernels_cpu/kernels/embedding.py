"""numpy kernels for lookup_table(_v2) (dense or SelectedRows gradient) and one_hot."""

from __future__ import annotations

import numpy as np
from oar.api import SelectedRows

from oar_kernels_cpu.kernels import FLOATS, array_module, kernel
from oar_kernels_cpu.kernels._util import scatter_add

xp = array_module(__name__)


def _ids(ids: xp.ndarray, height: int, op: str) -> xp.ndarray:
    flat = ids.reshape(-1).astype(np.int64, copy=False)
    if flat.size and (flat.min() < 0 or flat.max() >= height):
        bad = flat[(flat < 0) | (flat >= height)]
        raise ValueError(
            f"{op}: Ids hold {bad[:5].tolist()} outside the table's rows [0, {height})"
        )
    return flat


def _pad(attrs, height: int) -> int:
    p = attrs["padding_idx"]
    return p + height if p < -1 else p


def _lookup(op, v2):
    def fwd(inputs, attrs):
        w, ids = inputs["W"], inputs["Ids"]
        flat = _ids(ids, w.shape[0], op)
        out = w[flat]  # one gather: a fresh array
        pad = _pad(attrs, w.shape[0])
        if pad != -1:
            out[flat == pad] = 0
        lead = ids.shape if v2 else ids.shape[:-1]
        return {"Out": out.reshape(tuple(lead) + (w.shape[1],))}

    def grad(inputs, attrs):
        w, ids, d = inputs["W"], inputs["Ids"], inputs["Out@GRAD"]
        flat = _ids(ids, w.shape[0], op)
        dv = d.reshape(flat.size, w.shape[1])
        pad = _pad(attrs, w.shape[0])
        if pad != -1:
            keep = flat != pad
            if not keep.all():
                flat, dv = flat[keep], dv[keep]
        if attrs["is_sparse"]:
            return {"W@GRAD": SelectedRows(flat, w.shape[0], xp.ascontiguousarray(dv))}
        dw = xp.zeros_like(w)
        scatter_add(xp, dw, flat, dv)
        return {"W@GRAD": dw}

    kernel(op, FLOATS)(fwd)
    kernel(op + "_grad", FLOATS)(grad)


_lookup("lookup_table", False)
_lookup("lookup_table_v2", True)


def _one_hot(op, v2):
    def fwd(inputs, attrs):
        x = inputs["X"]
        depth = attrs["depth"]
        if inputs.get("depth_tensor") is not None:
            depth = int(xp.asarray(inputs["depth_tensor"]).reshape(-1)[0])
        flat = x.reshape(-1).astype(np.int64, copy=False)
        bad = (flat < 0) | (flat >= depth)
        if bad.any() and not attrs["allow_out_of_range"]:
            raise ValueError(
                f"{op}: X holds {flat[bad][:5].tolist()} outside [0, depth={depth}); "
                f"pass allow_out_of_range=True to get all-zero rows instead"
            )
        out = xp.zeros((flat.size, depth), dtype=attrs["dtype"])
        rows = xp.arange(flat.size)[~bad]
        out[rows, flat[~bad]] = 1
        lead = x.shape if v2 else x.shape[:-1]
        return {"Out": out.reshape(tuple(lead) + (depth,))}

    kernel(op, ("int32", "int64"))(fwd)


_one_hot("one_hot", False)
_one_hot("one_hot_v2", True)
