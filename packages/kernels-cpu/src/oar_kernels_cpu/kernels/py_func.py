"""py_func: call the registered Python function on host arrays."""

from __future__ import annotations

import numpy as np
from oar.api import py_func_callable

from oar_kernels_cpu.kernels import array_module, kernel

xp = array_module(__name__)


@kernel("py_func", None, generic=False)
def py_func(inputs, attrs):
    fn = py_func_callable(attrs["forward_callable_id"])
    args = [np.asarray(a) for a in inputs.get("X") or []]
    res = fn(*args)
    if res is None:
        res = []
    elif not isinstance(res, (list, tuple)):
        res = [res]
    return {"Out": [None if r is None else np.asarray(r) for r in res]}
