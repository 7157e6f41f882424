"""numpy kernels of squared_l2_norm (a SelectedRows input counts each row once, after merging)."""

from __future__ import annotations

import numpy as np
from oar.lod_tensor import SelectedRows

from oar_kernels_cpu.kernels import FLOATS, kernel
from oar_kernels_cpu.kernels.optimizer_updates import _merge_rows


@kernel("squared_l2_norm", FLOATS, selected_rows=True)
def squared_l2_norm(inputs, attrs):
    x = inputs["X"]
    if isinstance(x, SelectedRows):
        x = _merge_rows(x)[1]
    return {"Out": np.array([np.sum(np.square(x, dtype=np.float64))], dtype=x.dtype)}


@kernel("squared_l2_norm_grad", FLOATS)
def squared_l2_norm_grad(inputs, attrs):
    x, d = inputs["X"], inputs["Out@GRAD"]
    return {"X@GRAD": (2 * float(np.asarray(d).reshape(-1)[0])) * x}
