"""Helpers shared by kernels: Fluid-style broadcasting, gradient reduction, and the few
numpy-specific calls generic kernels need, behind one name each.

Array helpers use array methods only, so they serve every array module; the
ones that need the module take it as ``xp`` (bound by the calling kernel module).
"""

from __future__ import annotations

from typing import Any


def difference_grads(wanted, plus: str, minus: str, g) -> dict:
    """The gradients of a loss of ``plus - minus`` that ``wanted`` asks for: ``g`` and ``-g``."""
    out = {}
    if plus in wanted:
        out[plus] = g
    if minus in wanted:
        out[minus] = -g
    return out


def align_y(x, y, axis: int):
    """Reshape the lower-rank operand so numpy broadcasting follows Fluid's ``axis`` rule."""
    if x.ndim == y.ndim:
        return x, y
    if x.ndim > y.ndim:
        return x, _pad(y, x.ndim, axis)
    return _pad(x, y.ndim, axis), y


def _pad(a, rank: int, axis: int):
    if axis == -1 or axis == rank - a.ndim:
        return a
    shape = a.shape
    while len(shape) and axis + len(shape) > rank and shape[-1] == 1:
        shape = shape[:-1]
    return a.reshape((1,) * axis + tuple(shape) + (1,) * (rank - axis - len(shape)))


def reduce_to(g, shape: tuple):
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


def scatter_add(xp: Any, target, index, values) -> None:
    """``target[index] += values`` with repeated indices accumulated (numpy's ``add.at``;
    cupy >= 13 has it too; another array module overrides this one function)."""
    xp.add.at(target, index, values)


def scatter_sub(xp: Any, target, index, values) -> None:
    """``target[index] -= values`` with repeated indices accumulated."""
    xp.subtract.at(target, index, values)


def as_strided(xp: Any, a, shape, strides, writeable: bool = False):
    """A strided view of ``a`` (``xp.lib.stride_tricks.as_strided``; read-only unless asked)."""
    view = xp.lib.stride_tricks.as_strided(a, shape, strides)
    if not writeable and hasattr(view, "flags") and getattr(view.flags, "writeable", False):
        view.flags.writeable = False
    return view


_shared_rngs: dict = {}


def rng_for(xp: Any, seed: int):
    """A generator seeded by an op's ``seed`` attr, or the array module's shared one for seed 0."""
    if seed:
        return xp.random.default_rng(seed)
    rng = _shared_rngs.get(id(xp))
    if rng is None:
        rng = _shared_rngs[id(xp)] = xp.random.default_rng()
    return rng


# The draws below use only what cupy's ``Generator`` offers too (random, standard_normal,
# integers, uniform...): it has no ``normal`` and no ``permutation``.


def normal(rng, mean: float, std: float, shape):
    """``rng.normal(mean, std, shape)``, also on generators without ``normal`` (numpy's normal
    is ``mean + std * standard_normal``: the same numbers)."""
    return rng.standard_normal(shape) * std + mean


def permutation(xp: Any, rng, n: int):
    """A random permutation of ``range(n)``: numpy's Fisher-Yates where the generator has it,
    else the order that sorts ``n`` uniform draws (cupy's Generator)."""
    permute = getattr(rng, "permutation", None)
    return permute(n) if permute is not None else xp.argsort(rng.random(n))


def merge_rows(xp: Any, g):
    """A SelectedRows' unique rows and their summed values (a row looked up twice gets both
    gradients); rows in ascending order."""
    row_array = xp.asarray(g.row_array)
    rows, inv = xp.unique(row_array, return_inverse=True)
    v = xp.asarray(g.value)
    if len(rows) == len(row_array):
        order = xp.argsort(row_array, kind="stable")
        return rows, v[order]
    merged = xp.zeros((len(rows),) + v.shape[1:], dtype=v.dtype)
    scatter_add(xp, merged, inv.reshape(-1), v)
    return rows, merged
