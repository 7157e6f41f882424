"""im2col / col2im on strided views: the building blocks of conv and pool kernels.

Conv kernels copy window views into columns one batch chunk at a time (see
``conv.py``): :func:`grid_windows` gives the view, over the full padded width for
stride-1 convolutions so that the copy moves long contiguous runs. :func:`im2col`
is the whole-batch ``(C, KH, KW, N, OH, OW)`` layout (the transposed conv's filter
gradient); :func:`col2im_batched` sums columns back into an image.

Helpers shared by several families take the array module ``xp`` as their
first argument (the caller's, bound at registration).
"""

from __future__ import annotations

from typing import Any

from oar_kernels_cpu.kernels._util import as_strided


def pad_nchw(xp: Any, x, pads, value: float = 0.0):
    """Pad H and W by ``(top, bottom, left, right)``; returns ``x`` itself when nothing is padded."""
    top, bottom, left, right = pads
    if not (top or bottom or left or right):
        return x
    out = xp.full(
        x.shape[:2] + (x.shape[2] + top + bottom, x.shape[3] + left + right), value, dtype=x.dtype
    )
    out[:, :, top : top + x.shape[2], left : left + x.shape[3]] = x
    return out


def windows(xp: Any, xpad, k, s, d, out_hw):
    """Read-only view ``(N, C, KH, KW, OH, OW)`` of every filter tap over the padded ``xpad``."""
    n, c = xpad.shape[:2]
    sn, sc, sh, sw = xpad.strides
    return as_strided(
        xp,
        xpad,
        (n, c, k[0], k[1], out_hw[0], out_hw[1]),
        (sn, sc, sh * d[0], sw * d[1], sh * s[0], sw * s[1]),
        writeable=False,
    )


def grid_windows(xp: Any, x, pads, k, s, d, out_hw, full_width: bool = True):
    """Read-only view ``(N, C, KH, KW, OH, GW)`` of every filter tap over an output grid ``GW`` wide.

    ``full_width`` and stride 1 along W: the grid spans the whole padded width (``GW = Wp``; its
    last ``GW - OW`` columns are garbage the caller drops), so with stride 1 along H each tap's
    rows form one contiguous run per image and copying the view into columns is several times
    cheaper than copying ``OW``-long pieces, at the price of ``Wp / OW`` more GEMM work and a
    cropping copy. Otherwise ``GW = OW`` (the plain window view).
    """
    if s[1] != 1 or not full_width or (pads[2] == pads[3] == 0 and k[1] == 1):
        return windows(xp, pad_nchw(xp, x, pads), k, s, d, out_hw)
    n, c, h, w = x.shape
    hp, wp = h + pads[0] + pads[1], w + pads[2] + pads[3]
    extra = d[1] * (k[1] - 1)  # the last tap of the last row reads this far past the plane
    flat = xp.zeros((n, c, hp * wp + extra), x.dtype)
    sn, sc, se = flat.strides
    as_strided(xp, flat, (n, c, hp, wp), (sn, sc, wp * se, se), writeable=True)[
        :, :, pads[0] : pads[0] + h, pads[2] : pads[2] + w
    ] = x
    return as_strided(
        xp,
        flat,
        (n, c, k[0], k[1], out_hw[0], wp),
        (sn, sc, d[0] * wp * se, d[1] * se, s[0] * wp * se, se),
        writeable=False,
    )


def im2col(xp: Any, xpad, k, s, d, out_hw):
    """The column matrix ``(C, KH, KW, N, OH, OW)`` (one contiguous copy)."""
    return xp.ascontiguousarray(windows(xp, xpad, k, s, d, out_hw).transpose(1, 2, 3, 0, 4, 5))


def col2im_batched(xp: Any, cols, padded_hw, s, d):
    """Sum columns ``(N, C, KH, KW, OH, OW)`` into a padded image ``(N, C, Hp, Wp)``, one add per tap."""
    n, c = cols.shape[:2]
    out = xp.zeros((n, c) + tuple(padded_hw), dtype=cols.dtype)
    col2im_add(out, cols, s, d)
    return out


def col2im_add(out, cols, s, d) -> None:
    """``out (A, B, Hp, Wp) +=`` the columns ``(A, B, KH, KW, OH, OW)`` summed back into image
    positions, one strided add per tap (any leading ``A, B``: NCHW, or the conv kernels'
    channel-major ``(C, N, ...)`` chunks)."""
    kh, kw, oh, ow = cols.shape[2:]
    for i in range(kh):
        hs = slice(i * d[0], i * d[0] + s[0] * (oh - 1) + 1, s[0])
        for j in range(kw):
            out[:, :, hs, j * d[1] : j * d[1] + s[1] * (ow - 1) + 1 : s[1]] += cols[:, :, i, j]
