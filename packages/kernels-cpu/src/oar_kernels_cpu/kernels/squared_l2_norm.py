"""numpy kernels of squared_l2_norm (a SelectedRows input counts each row once, after merging)."""

from __future__ import annotations

import numpy as np
from oar.api import SelectedRows

from oar_kernels_cpu.kernels import FLOATS, array_module, kernel
from oar_kernels_cpu.kernels._util import merge_rows

xp = array_module(__name__)


@kernel("squared_l2_norm", FLOATS, selected_rows=True)
def squared_l2_norm(inputs, attrs):
    x = inputs["X"]
    if isinstance(x, SelectedRows):
        x = merge_rows(xp, x)[1]
    return {"Out": xp.array([xp.sum(xp.square(x, dtype=np.float64))], dtype=x.dtype)}


@kernel("squared_l2_norm_grad", FLOATS)
def squared_l2_norm_grad(inputs, attrs):
    x, d = inputs["X"], inputs["Out@GRAD"]
    return {"X@GRAD": (2 * float(xp.asarray(d).reshape(-1)[0])) * x}
