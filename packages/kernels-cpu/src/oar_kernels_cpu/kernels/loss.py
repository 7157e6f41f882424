"""numpy kernels for cross_entropy."""

from __future__ import annotations

import numpy as np

from oar_kernels_cpu.kernels import FLOATS, kernel

_TINY = {np.dtype(t): np.finfo(t).tiny for t in FLOATS}


def _hard_index(x, label):
    c = x.shape[-1]
    n = x.size // c if c else 0
    if label.size != n:
        raise ValueError(
            f"cross_entropy: hard Label of shape {list(label.shape)} must hold one class id per row "
            f"of X {list(x.shape)}, i.e. have shape {list(x.shape[:-1]) + [1]}"
        )
    return x.reshape(n, c), label.reshape(n).astype(np.int64, copy=False)


def _picked(x2, lab, ignore_index):
    """``x2[i, lab[i]]`` for every row, the ignored rows' mask (or None), in few numpy calls."""
    n, c = x2.shape
    ignore = None
    # viewed as unsigned, negative ids are huge: one max() checks both ends
    if (n and int(lab.view(np.uint64).max()) >= c) or 0 <= ignore_index < c:
        ignore = lab == ignore_index
        if np.count_nonzero(ignore):
            lab = np.where(ignore, 0, lab)
        else:
            ignore = None
        bad = (lab < 0) | (lab >= c)
        if np.count_nonzero(bad):
            raise ValueError(
                f"cross_entropy: Label holds class ids {lab[bad][:5].tolist()} outside [0, {c})"
            )
    rows = np.arange(n)
    return x2[rows, lab], rows, lab, ignore


@kernel("cross_entropy", FLOATS)
def cross_entropy(inputs, attrs):
    x, label = inputs["X"], inputs["Label"]
    tiny = _TINY[x.dtype]
    if attrs["soft_label"]:
        y = -(label * np.log(np.maximum(x, tiny))).sum(axis=-1, keepdims=True)
        return {"Y": y.astype(x.dtype, copy=False)}
    if label.dtype.kind not in "iu":
        raise TypeError(f"cross_entropy: hard Label must hold int64 class ids, given {label.dtype}")
    x2, lab = _hard_index(x, label)
    p, _rows, _lab, ignore = _picked(x2, lab, attrs["ignore_index"])
    y = np.log(np.maximum(p, tiny, out=p), out=p)
    np.negative(y, out=y)
    if ignore is not None:
        y[ignore] = 0
    return {"Y": y.reshape(x.shape[:-1] + (1,))}


@kernel("cross_entropy_grad", FLOATS)
def cross_entropy_grad(inputs, attrs):
    x, label, dy = inputs["X"], inputs["Label"], inputs["Y@GRAD"]
    tiny = _TINY[x.dtype]
    if attrs["soft_label"]:
        return {"X@GRAD": -label / np.maximum(x, tiny) * dy}
    x2, lab = _hard_index(x, label)
    p, rows, lab, ignore = _picked(x2, lab, attrs["ignore_index"])
    g = np.maximum(p, tiny, out=p)
    np.divide(dy.reshape(-1), g, out=g)
    np.negative(g, out=g)
    if ignore is not None:
        g[ignore] = 0
    dx = np.zeros_like(x2)
    dx[rows, lab] = g
    return {"X@GRAD": dx.reshape(x.shape)}
