"""numpy kernels for comparison and logical ops."""

from __future__ import annotations

import numpy as np

from oar_kernels_cpu.kernels import kernel
from oar_kernels_cpu.kernels._util import align_y

_COMPARE = {
    "less_than": np.less,
    "less_equal": np.less_equal,
    "greater_than": np.greater,
    "greater_equal": np.greater_equal,
    "equal": np.equal,
    "not_equal": np.not_equal,
}
_LOGICAL = {
    "logical_and": np.logical_and,
    "logical_or": np.logical_or,
    "logical_xor": np.logical_xor,
}


def _binary(ufunc, with_axis):
    def forward(inputs, attrs):
        x, y = inputs["X"], inputs["Y"]
        if x.shape != y.shape:
            x, y = align_y(x, y, attrs["axis"] if with_axis else -1)
        return {"Out": ufunc(x, y)}

    return forward


for _name, _f in _COMPARE.items():
    kernel(_name)(_binary(_f, True))
for _name, _f in _LOGICAL.items():
    kernel(_name, ("bool",))(_binary(_f, False))


@kernel("logical_not", ("bool",))
def logical_not(inputs, attrs):
    return {"Out": np.logical_not(inputs["X"])}
