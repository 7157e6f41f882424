"""numpy kernel of ``increment`` (a new one-element array, so Out may differ from X)."""

from __future__ import annotations

import numpy as np

from oar_kernels_cpu.kernels import NUMERIC, kernel


@kernel("increment", NUMERIC)
def increment(inputs, attrs):
    x = np.asarray(inputs["X"])
    if x.size != 1:
        raise ValueError(f"increment: X must hold exactly one element, given shape {list(x.shape)}")
    return {"Out": (x + attrs["step"]).astype(x.dtype, copy=False)}
