"""Helpers shared by kernels: Fluid-style broadcasting and gradient reduction."""

from __future__ import annotations

import numpy as np


def align_y(x: np.ndarray, y: np.ndarray, axis: int):
    """Reshape the lower-rank operand so numpy broadcasting follows Fluid's ``axis`` rule."""
    if x.ndim == y.ndim:
        return x, y
    if x.ndim > y.ndim:
        return x, _pad(y, x.ndim, axis)
    return _pad(x, y.ndim, axis), y


def _pad(a: np.ndarray, rank: int, axis: int) -> np.ndarray:
    if axis == -1 or axis == rank - a.ndim:
        return a
    shape = a.shape
    while len(shape) and axis + len(shape) > rank and shape[-1] == 1:
        shape = shape[:-1]
    return a.reshape((1,) * axis + tuple(shape) + (1,) * (rank - axis - len(shape)))


def reduce_to(g: np.ndarray, shape: tuple) -> np.ndarray:
    """Sum ``g`` over the dims that broadcasting expanded, to get ``shape``."""
    if g.shape == tuple(shape):
        return g
    nd = g.ndim - len(shape)
    if nd > 0:
        g = g.sum(axis=tuple(range(nd)))
    axes = tuple(i for i, (a, b) in enumerate(zip(g.shape, shape)) if b == 1 and a != 1)
    if axes:
        g = g.sum(axis=axes, keepdims=True)
    return g if g.shape == tuple(shape) else g.reshape(shape)


def as_dtype(a, dtype):
    return a if a.dtype == dtype else a.astype(dtype)
