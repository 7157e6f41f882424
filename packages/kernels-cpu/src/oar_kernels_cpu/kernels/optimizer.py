"""numpy kernels for parameter updates; they write into the parameter arrays in place.

Dense updates of large parameters run in flat pieces on the kernel thread pool
(``_split.each_piece``): every element's update is the same, so the results are too.
"""

from __future__ import annotations

import math

import numpy as np
from oar.api import SelectedRows

from oar_kernels_cpu.kernels import FLOATS, _parallel, _split, array_module, kernel
from oar_kernels_cpu.kernels._util import merge_rows, scatter_sub

xp = array_module(__name__)


@kernel("sgd", FLOATS, selected_rows=True, inplace=True)
def sgd(inputs, attrs, donated=frozenset()):
    p, g = inputs["Param"], inputs["Grad"]
    lr = inputs["LearningRate"].reshape(-1)[0]
    if isinstance(g, SelectedRows):
        scatter_sub(xp, p, xp.asarray(g.row_array), lr * xp.asarray(g.value))
    elif "Grad" in donated and g.shape == p.shape and g.dtype == p.dtype:
        _in_pieces(_sgd_donated, p, g, lr=lr)
    elif p.size < _parallel.SPLIT_MIN:  # small: no piece helpers (a per-step cost)
        p -= lr * g
    else:
        _in_pieces(_sgd, p, g, lr=lr)
    return {"ParamOut": p}


def _in_pieces(update, *arrays, **scalars):
    """``update(*arrays, **scalars)``, in flat pieces on the pool when the arrays are large."""
    if arrays[0].size < _parallel.SPLIT_MIN or not _split.each_piece(
        xp, lambda *pieces: update(*pieces, **scalars), *arrays
    ):
        update(*arrays, **scalars)


def _sgd(p, g, lr):
    p -= lr * g


def _sgd_donated(p, g, lr):
    g *= lr  # the gradient dies here: scale it in place instead of allocating lr * g
    p -= g


def _adam_dense(p, g, m1, m2, b1, b2, lr_t, eps_t):
    # one scratch array instead of a temporary per arithmetic step
    s = xp.multiply(g, 1 - b1)
    m1 *= b1
    m1 += s
    xp.multiply(g, g, out=s)
    s *= 1 - b2
    m2 *= b2
    m2 += s
    xp.sqrt(m2, out=s)
    s += eps_t
    xp.divide(m1, s, out=s)
    s *= lr_t
    p -= s


@kernel("adam", FLOATS, selected_rows=True)
def adam(inputs, attrs):
    p, g = inputs["Param"], inputs["Grad"]
    m1, m2 = inputs["Moment1"], inputs["Moment2"]
    b1p, b2p = inputs["Beta1Pow"], inputs["Beta2Pow"]
    b1 = (
        float(inputs["Beta1Tensor"].reshape(-1)[0])
        if inputs.get("Beta1Tensor") is not None
        else attrs["beta1"]
    )
    b2 = (
        float(inputs["Beta2Tensor"].reshape(-1)[0])
        if inputs.get("Beta2Tensor") is not None
        else attrs["beta2"]
    )
    # Fluid keeps float attrs in float32: (1 - 0.999f) differs from 0.001 in the 5th digit
    b1, b2 = float(np.float32(b1)), float(np.float32(b2))
    eps = attrs["epsilon"]
    lr = float(inputs["LearningRate"].reshape(-1)[0])
    b1pow, b2pow = float(b1p.reshape(-1)[0]), float(b2p.reshape(-1)[0])
    lr_t = lr * math.sqrt(1 - b2pow) / (1 - b1pow)
    eps_t = eps  # Fluid 1.8: p -= lr_t * m1 / (sqrt(m2) + epsilon), epsilon unscaled
    if isinstance(g, SelectedRows):
        g = g.to_dense() if not attrs["lazy_mode"] else g
    if isinstance(g, SelectedRows):  # lazy mode: only the rows present move
        rows, gv = merge_rows(xp, g)
        m1[rows] = b1 * m1[rows] + (1 - b1) * gv
        m2[rows] = b2 * m2[rows] + (1 - b2) * gv * gv
        p[rows] -= lr_t * m1[rows] / (xp.sqrt(m2[rows]) + eps_t)
    else:
        _in_pieces(_adam_dense, p, g, m1, m2, b1=b1, b2=b2, lr_t=lr_t, eps_t=eps_t)
    b1p *= b1
    b2p *= b2
    return {
        "ParamOut": p,
        "Moment1Out": m1,
        "Moment2Out": m2,
        "Beta1PowOut": b1p,
        "Beta2PowOut": b2p,
    }
