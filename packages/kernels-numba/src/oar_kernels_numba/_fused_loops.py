"""The compiled loops of the fusions (imported when a plan first uses one)."""

from __future__ import annotations

import numpy as np

from oar_kernels_numba._jit import jit, loop, prange


@loop
def bias_relu(x, b, out):
    # x, out: (outer, C, inner); b: (C,)
    for o in prange(x.shape[0]):
        for c in range(x.shape[1]):
            bc = b[c]
            for i in range(x.shape[2]):
                t = x[o, c, i] + bc
                out[o, c, i] = t if (t > 0 or t != t) else 0


@loop
def bias_relu_rows(x, b, out):
    # x, out: (outer, C); b: (C,). The 3-D loop's innermost run of length 1 does not
    # vectorise (12x slower for an fc's (batch, C) output)
    for o in prange(x.shape[0]):
        for c in range(x.shape[1]):
            t = x[o, c] + b[c]
            out[o, c] = t if (t > 0 or t != t) else 0


# In place (``out`` is ``x``), each loop has a variant of its own: the vectorised code's
# overlap check fails on an aliased ``out`` and the loop would run element by element.
@loop
def bias_relu_into(x, b):
    for o in prange(x.shape[0]):
        for c in range(x.shape[1]):
            bc = b[c]
            for i in range(x.shape[2]):
                t = x[o, c, i] + bc
                x[o, c, i] = t if (t > 0 or t != t) else 0


@loop
def bias_relu_rows_into(x, b):
    for o in prange(x.shape[0]):
        for c in range(x.shape[1]):
            t = x[o, c] + b[c]
            x[o, c] = t if (t > 0 or t != t) else 0


@jit
def relu_grad_bias_rows(y, d, dx, db):
    # y, d, dx: (rows, C); db: (C,). dx = d * (y > 0) (relu_grad), db = dx summed over the
    # rows in row order, as numpy's axis-0 sum adds them (elementwise_add_grad's bias part)
    zero = d.dtype.type(0)
    for j in range(d.shape[1]):
        db[j] = zero
    for r in range(d.shape[0]):
        for j in range(d.shape[1]):
            v = d[r, j] if y[r, j] > 0 else d[r, j] * zero
            dx[r, j] = v
            db[j] += v


@jit
def mean_ce_softmax_grad_rows(p, lab, ignore, dy, tiny, dx, db):
    """The gradient of mean(cross_entropy(softmax(z), label)) with respect to z, hard labels:
    the numpy kernels' float operations (cross_entropy_grad's ``-(dy / max(p_l, tiny))`` at
    the label, softmax_grad's ``(d - sum(d * p)) * p`` with d zero elsewhere). With a
    non-empty ``db`` (C,), also the bias gradient of ``z = x + b``: dz summed over the rows
    in row order (numpy's axis-0 sum). Returns False, writing nothing more, at a label
    outside [0, C) that is not ``ignore``."""
    c = p.shape[1]
    zero = p.dtype.type(0)
    bias = db.size > 0
    if bias:
        for j in range(c):
            db[j] = zero
    for r in range(p.shape[0]):
        lb = lab[r]
        if lb == ignore:
            for j in range(c):
                dx[r, j] = zero  # adds nothing to db
            continue
        if lb < 0 or lb >= c:
            return False
        pl = p[r, lb]
        g = -(dy / max(pl, tiny))
        s = g * pl
        for j in range(c):
            dx[r, j] = (zero - s) * p[r, j]
        dx[r, lb] = (g - s) * pl
        if bias:
            for j in range(c):
                db[j] += dx[r, j]
    return True


@jit
def bias_shift_rows(x, b, z, out):
    """z = x + b (the bias add); out = z - the row's max (softmax's shift; a NaN row stays
    NaN, as with numpy's max)."""
    n, c = x.shape
    for r in range(n):
        for j in range(c):
            z[r, j] = x[r, j] + b[j]
        m = z[r, 0]
        for j in range(1, c):
            t = z[r, j]
            if t > m or t != t:
                m = t
        for j in range(c):
            out[r, j] = z[r, j] - m


@jit
def normalise_ce_rows(e, lab, ignore, tiny, ce):
    """e[r] /= its sum (softmax's last step); ce[r] = -log(max(p at the label, tiny)), 0 at
    ``ignore`` (hard-label cross_entropy). Returns False at a label outside [0, C) that is
    not ``ignore`` (the numpy kernel raises the error)."""
    n, c = e.shape
    for r in range(n):
        s = e[r, 0]
        for j in range(1, c):
            s += e[r, j]
        for j in range(c):
            e[r, j] = e[r, j] / s
        lb = lab[r]
        if lb == ignore:
            ce[r] = 0
        elif lb < 0 or lb >= c:
            return False
        else:
            ce[r] = -np.log(max(e[r, lb], tiny))
    return True
