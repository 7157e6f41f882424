"""Which arrays the compiled loops take: float32/float64, C-contiguous, not small."""

from __future__ import annotations

import numpy as np

from oar_kernels_numba._limits import SMALL

DTYPES = ("float32", "float64")
FLOAT_DTYPES = frozenset(np.dtype(t) for t in DTYPES)  # dtype.name costs ~1 µs a call


def plain(a) -> bool:
    """A plain ndarray (no LoD, no SelectedRows) of a float dtype, C-contiguous, >= SMALL."""
    return (
        type(a) is np.ndarray
        and a.size >= SMALL
        and a.flags.c_contiguous
        and a.dtype in FLOAT_DTYPES
    )
