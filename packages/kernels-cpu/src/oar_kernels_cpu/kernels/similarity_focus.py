"""similarity_focus: greedy distinct-row/column maxima per slice (host loops, small slices)."""

from __future__ import annotations

import numpy as np

from oar_kernels_cpu.kernels import FLOATS, array_module, kernel

xp = array_module(__name__)


def _greedy_mask(t):
    rows, cols = t.shape
    order = np.argsort(-t, axis=None, kind="stable")
    used_r, used_c = np.zeros(rows, bool), np.zeros(cols, bool)
    mask = np.zeros(t.shape, bool)
    need = min(rows, cols)
    for flat in order:
        r, c = divmod(int(flat), cols)
        if not used_r[r] and not used_c[c]:
            used_r[r] = used_c[c] = True
            mask[r, c] = True
            need -= 1
            if need == 0:
                break
    return mask


@kernel("similarity_focus", FLOATS, generic=False)
def similarity_focus(inputs, attrs):
    x = np.asarray(inputs["X"])
    axis = attrs["axis"]
    out = np.zeros(x.shape, x.dtype)
    moved = np.moveaxis(x, axis, 1)  # (N, K, R, C)
    acc = np.zeros((x.shape[0],) + moved.shape[2:], bool)
    for n in range(x.shape[0]):
        for idx in attrs["indexes"]:
            acc[n] |= _greedy_mask(moved[n, idx])
    out = np.moveaxis(np.broadcast_to(acc[:, None], moved.shape), 1, axis).astype(x.dtype)
    return {"Out": np.ascontiguousarray(out)}
