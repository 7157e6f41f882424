"""Shape-inference helpers shared by op definitions.

Shapes use -1 for unknown dims; two dims are compatible if equal or either is -1.
Functions raise ValueError (shape) or TypeError (dtype) naming the slot.
"""

from __future__ import annotations

from collections.abc import Sequence

from oar.framework.dtypes import convert_dtype
from oar.registry import VarMeta


def compatible(a: int, b: int) -> bool:
    return a == b or a < 0 or b < 0


def numel(shape: Sequence) -> int:
    n = 1
    for d in shape:
        if d < 0:
            return -1
        n *= d
    return n


def same_as(slot: str = "X", out: str = "Out"):
    """infer_shape: ``out`` has the meta of input ``slot``."""

    def infer(ins, attrs):
        return {out: ins[slot]}

    return infer


def check_same_dtype(ins, *slots: str) -> str:
    dts = {s: ins[s].dtype for s in slots if ins.get(s) is not None}
    if len(set(dts.values())) > 1:
        raise TypeError(
            "inputs must have the same dtype, given "
            + ", ".join(f"{k}: {v}" for k, v in dts.items())
        )
    return next(iter(dts.values()))


def check_float(ins, slot: str) -> None:
    if ins[slot].dtype not in ("float16", "float32", "float64"):
        raise TypeError(f"input '{slot}' must be a float tensor, given {ins[slot].dtype}")


def broadcast_axis_shape(x: Sequence, y: Sequence, axis: int) -> tuple:
    """Fluid's elementwise broadcast: ``y`` matches a run of ``x``'s dims starting at ``axis``.

    Returns the output shape; raises ValueError if the shapes cannot broadcast.
    """
    x, y = list(x), list(y)
    if len(x) < len(y):
        return broadcast_axis_shape(y, x, axis)
    if axis == -1:
        axis = len(x) - len(y)
    # trailing 1s of y may run past x's end (Fluid trims them)
    while len(y) > 0 and axis + len(y) > len(x) and y[-1] == 1:
        y = y[:-1]
    if axis < 0 or axis + len(y) > len(x):
        raise ValueError(f"cannot broadcast Y of shape {y} into X of shape {x} at axis {axis}")
    out = list(x)
    for i, dy in enumerate(y):
        dx = x[axis + i]
        if dx == dy or dy == 1:
            out[axis + i] = dx
        elif dx == 1:
            out[axis + i] = dy
        elif dx < 0:
            out[axis + i] = dy
        elif dy < 0:
            out[axis + i] = dx
        else:
            raise ValueError(
                f"shape mismatch: X {x} and Y {y} (Y aligned at axis {axis}); dim {axis + i} is {dx} vs {dy}"
            )
    return tuple(out)


def meta(shape: Sequence, dtype: str, lod_level: int = 0) -> VarMeta:
    return VarMeta(tuple(int(d) for d in shape), dtype, lod_level)


def flatten_to_2d(shape: Sequence, num_col_dims: int) -> tuple:
    return numel(shape[:num_col_dims]), numel(shape[num_col_dims:])


def int_check(low: int):
    def check(v):
        return None if v >= low else f"must be >= {low}"

    return check


def ints_check(n: int):
    """An attr check: a list of exactly ``n`` ints (pool sizes, strides)."""

    def check(v):
        if len(v) != n or any(not isinstance(i, int) for i in v):
            return f"must be {n} ints"
        return None

    return check


def paddings_check(n: int):
    """An attr check: ``n`` (symmetric) or ``2 * n`` (per side) non-negative ints."""

    def check(v):
        if len(v) not in (n, 2 * n) or any((not isinstance(i, int)) or i < 0 for i in v):
            return f"must be {n} or {2 * n} non-negative ints"
        return None

    return check


def one_of(*choices):
    def check(v):
        return None if v in choices else f"must be one of {list(choices)}"

    return check


def dtype_check(v) -> str | None:
    """Attr check: None for a dtype ``convert_dtype`` knows, else its error text."""
    try:
        convert_dtype(v)
    except TypeError as exc:
        return str(exc)
    return None
