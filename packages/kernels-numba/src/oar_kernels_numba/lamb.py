"""lamb: the moment updates and the trust ratio's norms in three compiled passes.

The numpy kernel takes about a dozen passes (and two float64 temporaries for the
norms). Here pass 1 updates both moments and writes the update direction ``r``,
pass 2 sums ``p²`` and ``r²`` in float64 over fixed chunks (the same chunks for any
thread count, added in order: the ratio does not depend on the threads), pass 3
applies ``p -= lr * ratio * r``. The elementwise float operations are the numpy
kernel's, in float32 for float32 parameters; the norms are float64 sums in another
order than numpy's pairwise ones, so results agree within float tolerance (nearly
always bit for bit).
"""

from __future__ import annotations

import math

import numpy as np

from oar_kernels_numba._fallback import Fallback
from oar_kernels_numba._jit import SMALL, loop, prange
from oar_kernels_numba.optimizer import _flat

DTYPES = ("float32", "float64")
FLOAT_DTYPES = frozenset(np.dtype(t) for t in DTYPES)  # dtype.name costs ~1 µs a call
CHUNKS = 64  # fixed: the norms' summation order is the same for every thread count


@loop
def _moments(p, g, m1, m2, b1, b2, omb1, omb2, eps, wd, r):
    for i in prange(p.size):
        gi = g[i]
        m = m1[i] * b1 + omb1 * gi
        v = m2[i] * b2 + omb2 * (gi * gi)
        m1[i] = m
        m2[i] = v
        r[i] = m / (np.sqrt(v) + eps) + wd * p[i]


@loop
def _norms(p, r, out):
    """out[c] = (sum p², sum r²) over chunk c, in float64."""
    n = p.size
    step = (n + CHUNKS - 1) // CHUNKS
    for c in prange(CHUNKS):
        sp = 0.0
        sr = 0.0
        for i in range(c * step, min(n, (c + 1) * step)):
            a = np.float64(p[i])
            b = np.float64(r[i])
            sp += a * a
            sr += b * b
        out[c, 0] = sp
        out[c, 1] = sr


@loop
def _apply(p, r, s):
    for i in prange(p.size):
        p[i] = p[i] - s * r[i]


class Lamb:
    def __init__(self, device: str, priority: int) -> None:
        self.fb = Fallback("lamb", device, priority)

    def __call__(self, inputs, attrs):
        p, g = inputs["Param"], inputs["Grad"]
        m1, m2 = inputs["Moment1"], inputs["Moment2"]
        flat = _flat(p, g, m1, m2) if type(p) is np.ndarray and p.size >= SMALL else None
        if flat is None or p.dtype not in FLOAT_DTYPES:
            return self.fb(p.dtype if hasattr(p, "dtype") else "float32", inputs, attrs)
        t = p.dtype.type
        b1, b2 = attrs["beta1"], attrs["beta2"]
        scalars = (
            t(b1),
            t(b2),
            t(1 - b1),
            t(1 - b2),
            t(attrs["epsilon"]),
            t(attrs["weight_decay"]),
        )
        r = np.empty_like(flat[0])
        _moments(p.size, *flat, *scalars, r)
        sums = np.empty((CHUNKS, 2))
        _norms(p.size, flat[0], r, sums)
        p_sq = r_sq = 0.0
        for c in range(CHUNKS):  # in order
            p_sq += sums[c, 0]
            r_sq += sums[c, 1]
        p_norm, r_norm = math.sqrt(p_sq), math.sqrt(r_sq)
        ratio = p_norm / r_norm if p_norm > 0 and r_norm > 0 else 1.0
        lr = float(inputs["LearningRate"].reshape(-1)[0])
        _apply(p.size, flat[0], r, t(lr * ratio))
        return {"ParamOut": p, "Moment1Out": m1, "Moment2Out": m2}


def register(registry, device: str, priority: int) -> None:
    registry.register_kernel("lamb", device, DTYPES, Lamb(device, priority), priority)
