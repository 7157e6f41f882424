"""N-D window views and their adjoint: the building blocks of the 3-D conv and pool kernels.

Arrays are channels-first ``(N, C, *spatial)``; ``pads`` is flat
``(before_0, after_0, before_1, after_1, ...)``. Helpers take the caller's
array module ``xp`` first.
"""

from __future__ import annotations

from typing import Any

from oar_kernels_cpu.kernels._util import as_strided


def pad_nd(xp: Any, x, pads, value: float = 0.0):
    """Pad the spatial dims; ``x`` itself when nothing is padded."""
    if not any(pads):
        return x
    r = x.ndim - 2
    shape = x.shape[:2] + tuple(x.shape[2 + i] + pads[2 * i] + pads[2 * i + 1] for i in range(r))
    out = xp.full(shape, value, dtype=x.dtype)
    out[
        (slice(None), slice(None))
        + tuple(slice(pads[2 * i], pads[2 * i] + x.shape[2 + i]) for i in range(r))
    ] = x
    return out


def crop_nd(x, pads):
    """The inverse of :func:`pad_nd` (a view)."""
    r = x.ndim - 2
    return x[
        (slice(None), slice(None))
        + tuple(slice(pads[2 * i], x.shape[2 + i] - pads[2 * i + 1]) for i in range(r))
    ]


def windows_nd(xp: Any, xpad, k, s, d, out):
    """Read-only view ``(N, C, *K, *O)`` of every filter tap over the padded ``xpad``."""
    st = xpad.strides
    tap = tuple(st[2 + i] * d[i] for i in range(len(k)))
    step = tuple(st[2 + i] * s[i] for i in range(len(k)))
    return as_strided(xp, xpad, xpad.shape[:2] + tuple(k) + tuple(out), st[:2] + tap + step)


def vol2col(xp: Any, x, k, s, d, pads, out, value: float = 0.0):
    """Columns ``(N, C * prod(K), prod(O))`` of ``x`` (one contiguous copy)."""
    win = windows_nd(xp, pad_nd(xp, x, pads, value), k, s, d, out)
    n, c = x.shape[:2]
    kk = 1
    for v in k:
        kk *= v
    oo = 1
    for v in out:
        oo *= v
    return xp.ascontiguousarray(win).reshape(n, c * kk, oo)


def col2vol(xp: Any, cols, padded, s, d):
    """Sum ``cols`` ``(N, C, *K, *O)`` into a padded volume ``(N, C, *padded)``, one add per tap."""
    r = len(padded)
    k, o = cols.shape[2 : 2 + r], cols.shape[2 + r :]
    out = xp.zeros(cols.shape[:2] + tuple(padded), dtype=cols.dtype)
    for tap in _taps(k):
        dst = tuple(
            slice(t * d[i], t * d[i] + s[i] * (o[i] - 1) + 1, s[i]) for i, t in enumerate(tap)
        )
        out[(slice(None), slice(None)) + dst] += cols[(slice(None), slice(None)) + tap]
    return out


def _taps(k):
    taps = [()]
    for n in k:
        taps = [t + (i,) for t in taps for i in range(n)]
    return taps
