"""numpy kernel for cast."""

from __future__ import annotations

from oar_kernels_cpu.kernels import array_module, kernel

xp = array_module(__name__)


_DTYPES: dict = {}  # out_dtype attr -> dtype object (comparing to a str parses it each time)


def _dtype(name):
    dt = _DTYPES.get(name)
    if dt is None:
        try:
            dt = xp.dtype(name)
        except TypeError:  # a name the array module does not know: let astype say so
            return name
        _DTYPES[name] = dt
    return dt


@kernel("cast")
def cast(inputs, attrs):
    x = inputs["X"]
    dtype = _dtype(attrs["out_dtype"])
    return {"Out": x if x.dtype == dtype else x.astype(dtype)}
