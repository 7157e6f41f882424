"""``fluid.contrib.memory_usage``: an estimate of the memory a program's variables take."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["memory_usage"]

_UNITS = ("B", "KB", "MB", "GB")


def memory_usage(program: Any, batch_size: int) -> tuple:
    """``(lower, upper, unit)``: the bytes of every tensor of the program with the batch
    dimension (-1) set to ``batch_size``, give or take 5% (temporaries freed early,
    workspace of kernels), in the largest unit that keeps the value >= 1."""
    from oar.framework.dtypes import convert_dtype
    from oar.framework.program import Program

    if not isinstance(program, Program):
        raise TypeError(f"memory_usage: program must be a Program, given {type(program).__name__}")
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
        raise ValueError(f"memory_usage: batch_size must be a positive int, given {batch_size!r}")
    total = 0
    for block in program.blocks:
        for var in block.vars.values():
            shape = getattr(var, "shape", None)
            dtype = getattr(var, "dtype", None)
            if shape is None or dtype is None:
                continue
            try:
                itemsize = np.dtype(convert_dtype(dtype)).itemsize
            except (TypeError, ValueError):
                continue
            n = 1
            for d in shape:
                n *= batch_size if d is None or d < 0 else d
            total += n * itemsize
    value, unit = float(total), 0
    while value >= 1024 and unit < len(_UNITS) - 1:
        value /= 1024
        unit += 1
    return value * 0.95, value * 1.05, _UNITS[unit]
