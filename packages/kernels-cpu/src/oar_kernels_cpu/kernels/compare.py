"""numpy kernels for comparison and logical ops."""

from __future__ import annotations

from oar_kernels_cpu.kernels import array_module, kernel
from oar_kernels_cpu.kernels._util import align_y

xp = array_module(__name__)

_COMPARE = {
    "less_than": xp.less,
    "less_equal": xp.less_equal,
    "greater_than": xp.greater,
    "greater_equal": xp.greater_equal,
    "equal": xp.equal,
    "not_equal": xp.not_equal,
}
_LOGICAL = {
    "logical_and": xp.logical_and,
    "logical_or": xp.logical_or,
    "logical_xor": xp.logical_xor,
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
    return {"Out": xp.logical_not(inputs["X"])}
