"""Helpers shared by the interpolation kernels (interp, interp3d): the output size from the
op's inputs and attrs, and Fluid's linear interpolation weights along one axis."""

from __future__ import annotations

from typing import Any

import numpy as np

from oar_kernels_cpu.kernels._util import scatter_add


def out_size(xp: Any, inputs, attrs, spatial, names: tuple, op: str) -> list:
    """The output's spatial size: ``OutSize``, ``SizeTensor``, ``Scale`` (input or attr) times
    ``spatial``, else the attrs ``names`` (``("out_h", "out_w")``)."""
    n = len(names)
    if "OutSize" in inputs:
        out = [int(v) for v in xp.asarray(inputs["OutSize"]).reshape(-1)[:n]]
    elif "SizeTensor" in inputs:
        out = [int(xp.asarray(v).reshape(-1)[0]) for v in inputs["SizeTensor"][:n]]
    elif "Scale" in inputs or attrs["scale"] > 0:
        s = (
            float(xp.asarray(inputs["Scale"]).reshape(-1)[0])
            if "Scale" in inputs
            else attrs["scale"]
        )
        out = [int(v * s) for v in spatial]
    else:
        out = [attrs[name] for name in names]
    if min(out) <= 0:
        raise ValueError(f"{op}: output size must be positive, got {out}")
    return out


def ratio(size: int, out: int, align_corners: bool) -> float:
    if out <= 1:
        return 0.0
    return (size - 1) / (out - 1) if align_corners else size / out


def linear_weights(xp: Any, size: int, out: int, align_corners, align_mode, dtype):
    """(out, size): Fluid's linear interpolation weights along one axis."""
    r = ratio(size, out, align_corners)
    k = xp.arange(out)
    half = align_mode == 0 and not align_corners
    src = xp.maximum(r * (k + 0.5) - 0.5 if half else r * k, 0.0)
    lo = xp.minimum(src.astype(np.int64), size - 1)
    hi = xp.minimum(lo + 1, size - 1)
    frac = src - lo
    a = xp.zeros((out, size), np.float64)
    scatter_add(xp, a, (k, lo), 1.0 - frac)
    scatter_add(xp, a, (k, hi), frac)
    return a.astype(dtype)
