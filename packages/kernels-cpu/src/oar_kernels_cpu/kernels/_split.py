"""Elementwise maps and reductions over large arrays, cut into the pool's fixed pieces.

Each helper computes what one numpy call would, with the array cut into row pieces
(:func:`oar_kernels_cpu.kernels._parallel.pieces`) that the kernel thread pool runs at once:
numpy releases the GIL inside its loops. Elementwise results are bit for bit those of the
single call, so elementwise maps are cut only when the pool has several threads. Reductions
over the leading axis add per-piece partial results in piece order, and are cut by the sizes
alone whatever the thread count, so they are the same for every thread count (and within
rounding of numpy's own pairwise sum). Small arrays (below ``_parallel.SPLIT_MIN`` elements), arrays outside host memory
(cupy) and operands of mixed dtypes take the single call.

The helpers take the calling kernel module's ``xp``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from oar_kernels_cpu.kernels import _parallel


def _host(arrays: Sequence) -> bool:
    """Whether every array lives in host memory (numpy and its subclasses; not cupy)."""
    # on the type: the instance attribute builds a dict per access (about 3 µs)
    return all(getattr(type(a), "__array_interface__", None) is not None for a in arrays)


def _arrays(args: Sequence) -> list:
    return [a for a in args if hasattr(a, "shape")]


def _one_float_dtype(arrays: Sequence):
    """The float dtype every array shares, or None (mixed, or not float)."""
    dt = arrays[0].dtype
    if dt.kind != "f" or any(a.dtype != dt for a in arrays[1:]):
        return None
    return dt


def _flat_or_rows(shape: tuple, arrays: Sequence) -> tuple:
    """``(rows, row_size, flat)``: every array of the full shape and C-contiguous is cut as one
    flat vector; otherwise the result is cut along its leading axis."""
    size = math.prod(shape)
    if all(a.shape == shape and a.flags.c_contiguous for a in arrays):
        return size, 1, True
    return shape[0], size // max(shape[0], 1), False


def _piece(a: Any, shape: tuple, flat: bool, lo: int, hi: int) -> Any:
    """Rows ``lo:hi`` of operand ``a`` of a result of ``shape`` (a broadcast operand whole)."""
    if not hasattr(a, "shape") or a.ndim == 0:
        return a
    if flat:
        return a.reshape(-1)[lo:hi]
    if a.ndim == len(shape) and a.shape[0] == shape[0]:
        return a[lo:hi]
    return a  # broadcast along the leading axis


def large(a: Any) -> bool:
    """Whether ``a`` has enough elements for a split to pay."""
    return a.size >= _parallel.SPLIT_MIN


def _small(args: Sequence) -> bool:
    """Whether every operand is below the split threshold (the common case: checked first)."""
    least = _parallel.SPLIT_MIN
    for a in args:
        if getattr(a, "size", 0) >= least:
            return False
    return True


def _split_plan(xp: Any, args: Sequence, out: Any) -> tuple | None:
    """``(shape, dtype, cuts, flat)`` for a split of ``args`` (and ``out``), or None when one
    call is the way: small, not on the host, mixed dtypes, or one piece."""
    if _small(args):
        return None
    arrays = _arrays(args)
    if not arrays:
        return None
    shape = tuple(xp.broadcast_shapes(*(a.shape for a in arrays)))
    if not shape or math.prod(shape) < _parallel.SPLIT_MIN:
        return None
    every = arrays + ([out] if out is not None else [])
    dtype = _one_float_dtype(every)
    if dtype is None or not _host(every) or (out is not None and out.shape != shape):
        return None
    rows, row_size, flat = _flat_or_rows(shape, every)
    if _parallel.parallel_threads() < 2:  # elementwise: one call is bit for bit the same
        return None
    cuts = _parallel.pieces(rows, row_size)
    return (shape, dtype, cuts, flat) if len(cuts) > 1 else None


def ufunc(xp: Any, fn: Callable, *args: Any, out: Any = None) -> Any:
    """``fn(*args, out=out)`` for a numpy ufunc ``fn`` over broadcasting operands of one float
    dtype (Python scalars welcome), split into row pieces of the result when it is large."""
    plan = None if _small(args) else _split_plan(xp, args, out)
    if plan is None:
        return fn(*args, out=out)
    shape, dtype, cuts, flat = plan
    if out is None:
        out = xp.empty(shape, dtype)
    dst = out.reshape(-1) if flat else out

    def run(lo: int, hi: int) -> None:
        fn(*(_piece(a, shape, flat, lo, hi) for a in args), out=dst[lo:hi])

    _parallel.for_pieces(run, cuts)
    return out


def apply(xp: Any, fn: Callable, *args: Any, out: Any = None) -> Any:
    """``fn(*args)`` for an elementwise ``fn`` (any chain of numpy calls) whose result has the
    broadcast shape of its operands, split into row pieces (each piece's result cast to the
    operands' one float dtype and copied into place, or into ``out``) when it is large."""
    plan = _split_plan(xp, args, out)
    if plan is None:
        if out is None:
            return fn(*args)
        out[...] = fn(*args)
        return out
    shape, dtype, cuts, flat = plan
    if out is None:
        out = xp.empty(shape, dtype)
    dst = out.reshape(-1) if flat else out

    def run(lo: int, hi: int) -> None:
        dst[lo:hi] = fn(*(_piece(a, shape, flat, lo, hi) for a in args))

    _parallel.for_pieces(run, cuts)
    return out


def each_piece(xp: Any, fn: Callable, *arrays: Any) -> bool:
    """``fn(*pieces)`` for the matching flat pieces of same-shape, C-contiguous arrays (an
    update written in place, such as an optimizer's), when they are large enough to split.
    Returns False, having done nothing, when they are not: the caller then runs ``fn(*arrays)``."""
    shape = arrays[0].shape
    if (
        arrays[0].size < _parallel.SPLIT_MIN
        or any(a.shape != shape or not a.flags.c_contiguous for a in arrays)
        or _one_float_dtype(arrays) is None
        or not _host(arrays)
        or _parallel.parallel_threads() < 2
    ):
        return False
    cuts = _parallel.pieces(arrays[0].size)
    flats = [a.reshape(-1) for a in arrays]
    _parallel.for_pieces(lambda lo, hi: fn(*(f[lo:hi] for f in flats)), cuts)
    return True


# --- reductions ---------------------------------------------------------------------------------
_COMBINE = {"sum": "add", "max": "maximum", "min": "minimum"}


def reduce(xp: Any, how: str, x: Any, axes: Sequence[int], keepdims: bool = False) -> Any:
    """``x.sum`` / ``x.max`` / ``x.min`` / ``x.mean`` over ``axes``, split along the leading axis
    when ``x`` is large: rows of the result computed apart when the leading axis is kept, else
    per-piece partial results combined in piece order. ``how`` names the reduction."""
    if x.size < _parallel.SPLIT_MIN or not axes:
        return getattr(x, how)(axis=tuple(axes), keepdims=keepdims)
    axes = tuple(sorted(a % x.ndim for a in axes)) if x.ndim else ()
    cuts = row_cuts(x)
    if len(cuts) == 1:
        return getattr(x, how)(axis=axes, keepdims=keepdims)
    kept = tuple(1 if i in axes else d for i, d in enumerate(x.shape))
    if 0 not in axes:
        out = xp.empty(kept, x.dtype)

        def rows(lo: int, hi: int) -> None:
            out[lo:hi] = getattr(x[lo:hi], how)(axis=axes, keepdims=True)

        _parallel.for_pieces(rows, cuts)
    else:
        part = "sum" if how == "mean" else how
        partial: list = [None] * len(cuts)

        def run(i: int) -> None:
            lo, hi = cuts[i]
            partial[i] = getattr(x[lo:hi], part)(axis=axes, keepdims=True)

        _parallel.parallel_for(run, len(cuts), blas=False)
        combine = getattr(xp, _COMBINE[part])
        out = partial[0]
        for p in partial[1:]:
            combine(out, p, out=out)
        if how == "mean":
            out = out / math.prod(x.shape[a] for a in axes)
    out = out.astype(x.dtype, copy=False)
    return out if keepdims else out.reshape([d for i, d in enumerate(x.shape) if i not in axes])


def row_cuts(x: Any) -> list:
    """``(start, stop)`` pieces along the leading axis of ``x`` for a split reduction: several
    for a large float32/float64 array in host memory, else the one piece ``(0, len)``."""
    whole = [(0, x.shape[0] if x.ndim else 1)]
    if x.ndim == 0 or x.size < _parallel.SPLIT_MIN or x.dtype.kind != "f" or x.dtype.itemsize < 4:
        return whole  # float16 partial sums would lose precision numpy's float32 sum keeps
    if not _host([x]):
        return whole
    return _parallel.pieces(x.shape[0], x.size // max(x.shape[0], 1))


def summed(fn: Callable, cuts: list) -> Any:
    """``fn(start, stop)`` for every piece, on the pool, added in piece order (a partial sum
    per piece: the total is the same for every thread count). ``fn`` may return a tuple of
    partial sums: the totals come back as a tuple."""
    parts: list = [None] * len(cuts)

    def run(i: int) -> None:
        parts[i] = fn(*cuts[i])

    _parallel.parallel_for(run, len(cuts))
    if isinstance(parts[0], tuple):
        return tuple(summed_in_order(list(p)) for p in zip(*parts))
    return summed_in_order(parts)


def summed_in_order(parts: list) -> Any:
    total = parts[0]
    for p in parts[1:]:
        total = total + p
    return total


def reduce_to(xp: Any, g: Any, shape: Sequence[int]) -> Any:
    """``_util.reduce_to``: ``g`` summed over the axes broadcasting expanded to get ``shape``."""
    gs = g.shape
    if gs == shape:  # shape is mostly a tuple already: nothing to build
        return g
    shape = tuple(shape)
    nd = len(gs) - len(shape)
    axes = tuple(range(nd))
    trailing = gs[nd:] == shape  # only leading axes to sum (a bias gradient): no keepdims
    if not trailing:
        axes += tuple(nd + i for i, (a, b) in enumerate(zip(gs[nd:], shape)) if b == 1 and a != 1)
    if not axes:
        return g.reshape(shape)
    if g.size < _parallel.SPLIT_MIN:  # one reduction (ufunc.reduce: no Python-level wrapper)
        if trailing:
            return xp.add.reduce(g, axis=axes)
        return xp.add.reduce(g, axis=axes, keepdims=True).reshape(shape)
    return reduce(xp, "sum", g, axes, keepdims=True).reshape(shape)


def by_rows(xp: Any, fn: Callable, *arrays: Any, out_shape: Sequence[int]) -> Any:
    """``fn(*arrays)`` for a ``fn`` whose result's rows (its leading axis, which every array
    shares) depend only on the same rows of the arrays, such as pooling per image plane:
    computed in row pieces on the pool when the first array is large."""
    x = arrays[0]
    if x.ndim == 0 or x.size < _parallel.SPLIT_MIN or _one_float_dtype(arrays) is None:
        return fn(*arrays)
    if not _host(arrays) or any(a.shape[0] != x.shape[0] for a in arrays):
        return fn(*arrays)
    if _parallel.parallel_threads() < 2:  # rows computed apart: one call is the same
        return fn(*arrays)
    cuts = _parallel.pieces(x.shape[0], x.size // x.shape[0])
    if len(cuts) == 1:
        return fn(*arrays)
    out = xp.empty(tuple(out_shape), x.dtype)

    def run(lo: int, hi: int) -> None:
        out[lo:hi] = fn(*(a[lo:hi] for a in arrays))

    _parallel.for_pieces(run, cuts)
    return out
