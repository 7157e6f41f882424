"""numpy kernel of lod_reset (and lod_append): the data is shared, only the LoD changes.

Numpy-only (``generic=False``): LoD offsets are host data and the kernels loop over
sequences on the host; a device plugin overrides them.
"""

from __future__ import annotations

import numpy as np
from oar.api import LoDTensor
from oar.errors import ShapeError

from oar_kernels_cpu.kernels import NUMERIC, kernel
from oar_kernels_cpu.kernels._sequence import array_of, with_lod


def _check_level(level: list, rows_or_len: int, what: str) -> list:
    level = [int(v) for v in level]
    if not level or level[0] != 0 or any(b < a for a, b in zip(level, level[1:])):
        raise ShapeError(
            f"lod_reset: the target LoD must be offsets starting at 0 and never decreasing, "
            f"given {level}"
        )
    if level[-1] != rows_or_len:
        raise ShapeError(f"lod_reset: the target LoD ends at {level[-1]} but {what} {rows_or_len}")
    return level


def _target(inputs, attrs) -> list:
    y = inputs.get("Y")
    if y is not None:
        if isinstance(y, LoDTensor) and y._lod:
            return [list(level) for level in y._lod]
        return [array_of(y).reshape(-1).tolist()]
    if not attrs["target_lod"]:
        raise ShapeError("lod_reset: give either Y or a non-empty target_lod")
    return [list(attrs["target_lod"])]


@kernel("lod_reset", NUMERIC, lod=True, generic=False)
def lod_reset(inputs, attrs):
    x_in = inputs["X"]
    x = array_of(x_in)
    target = _target(inputs, attrs)
    if attrs["append"]:
        old = [list(level) for level in x_in._lod] if isinstance(x_in, LoDTensor) else []
        new_last = _check_level(target[-1], x.shape[0], "input X has rows:")
        if old and old[-1][-1] != len(new_last) - 1:
            raise ShapeError(
                f"lod_reset (append): X's last LoD level ends at {old[-1][-1]} but the appended "
                f"level holds {len(new_last) - 1} sequences"
            )
        return {"Out": with_lod(x, old + [new_last])}
    levels = [list(level) for level in target]
    levels[-1] = _check_level(levels[-1], x.shape[0], "input X has rows:")
    return {"Out": with_lod(x, levels)}


@kernel("lod_reset_grad", NUMERIC, lod=True, generic=False)
def lod_reset_grad(inputs, attrs):
    x_in = inputs["X"]
    lod = [list(level) for level in x_in._lod] if isinstance(x_in, LoDTensor) and x_in._lod else []
    return {"X@GRAD": with_lod(np.array(array_of(inputs["Out@GRAD"])), lod)}
