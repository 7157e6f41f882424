"""numpy kernels for cross_entropy."""

from __future__ import annotations

import numpy as np

from oar_kernels_cpu.kernels import FLOATS, kernel


def _hard_index(x, label):
    n = int(np.prod(x.shape[:-1]))
    return x.reshape(n, x.shape[-1]), label.reshape(n).astype(np.int64)


@kernel("cross_entropy", FLOATS)
def cross_entropy(inputs, attrs):
    x, label = inputs["X"], inputs["Label"]
    tiny = np.finfo(x.dtype).tiny
    if attrs["soft_label"]:
        y = -(label * np.log(np.maximum(x, tiny))).sum(axis=-1, keepdims=True)
        return {"Y": y.astype(x.dtype, copy=False)}
    if label.dtype.kind not in "iu":
        raise TypeError(f"cross_entropy: hard Label must hold int64 class ids, given {label.dtype}")
    x2, lab = _hard_index(x, label)
    ignore = lab == attrs["ignore_index"]
    safe = np.where(ignore, 0, lab)
    if (safe < 0).any() or (safe >= x2.shape[1]).any():
        bad = lab[(~ignore) & ((lab < 0) | (lab >= x2.shape[1]))]
        raise ValueError(f"cross_entropy: Label holds class ids {bad[:5].tolist()} outside [0, {x2.shape[1]})")
    p = x2[np.arange(x2.shape[0]), safe]
    y = -np.log(np.maximum(p, tiny))
    y[ignore] = 0
    return {"Y": y.reshape(x.shape[:-1] + (1,)).astype(x.dtype, copy=False)}


@kernel("cross_entropy_grad", FLOATS)
def cross_entropy_grad(inputs, attrs):
    x, label, dy = inputs["X"], inputs["Label"], inputs["Y@GRAD"]
    tiny = np.finfo(x.dtype).tiny
    if attrs["soft_label"]:
        return {"X@GRAD": -label / np.maximum(x, tiny) * dy}
    x2, lab = _hard_index(x, label)
    dx = np.zeros_like(x2)
    rows = np.arange(x2.shape[0])
    keep = lab != attrs["ignore_index"]
    r, c = rows[keep], lab[keep]
    dx[r, c] = -dy.reshape(-1)[keep] / np.maximum(x2[r, c], tiny)
    return {"X@GRAD": dx.reshape(x.shape)}
