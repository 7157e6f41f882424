"""Kernels of flip, index_select, index_sample, meshgrid, allclose, randperm."""

from __future__ import annotations

from oar_kernels_cpu.kernels import FLOATS, NUMERIC, array_module, kernel
from oar_kernels_cpu.kernels._util import permutation, rng_for, scatter_add

xp = array_module(__name__)
ANY = NUMERIC + ("bool",)


@kernel("flip", ANY)
def flip(inputs, attrs):
    return {"Out": xp.flip(inputs["X"], axis=tuple(attrs["dims"]))}


@kernel("flip_grad", FLOATS)
def flip_grad(inputs, attrs):
    return {"X@GRAD": xp.flip(inputs["Out@GRAD"], axis=tuple(attrs["dims"]))}


@kernel("index_select", ANY)
def index_select(inputs, attrs):
    return {"Out": xp.take(inputs["X"], inputs["Index"].astype("int64"), axis=attrs["dim"])}


@kernel("index_select_grad", FLOATS)
def index_select_grad(inputs, attrs):
    x, idx, d = inputs["X"], inputs["Index"].astype("int64"), inputs["Out@GRAD"]
    axis = attrs["dim"] % x.ndim
    g = xp.zeros(x.shape, d.dtype)
    key = (slice(None),) * axis + (idx,)
    scatter_add(xp, g, key, d)
    return {"X@GRAD": g}


def _rows(idx):
    return xp.arange(idx.shape[0])[:, None]


@kernel("index_sample", ANY)
def index_sample(inputs, attrs):
    idx = inputs["Index"].astype("int64")
    return {"Out": inputs["X"][_rows(idx), idx]}


@kernel("index_sample_grad", FLOATS)
def index_sample_grad(inputs, attrs):
    x, idx, d = inputs["X"], inputs["Index"].astype("int64"), inputs["Out@GRAD"]
    g = xp.zeros(x.shape, d.dtype)
    scatter_add(xp, g, (xp.broadcast_to(_rows(idx), idx.shape), idx), d)
    return {"X@GRAD": g}


@kernel("meshgrid", ANY)
def meshgrid(inputs, attrs):
    return {"Out": [xp.ascontiguousarray(o) for o in xp.meshgrid(*inputs["X"], indexing="ij")]}


@kernel("meshgrid_grad", FLOATS)
def meshgrid_grad(inputs, attrs):
    xs, ds = inputs["X"], inputs["Out@GRAD"]
    n = len(xs)
    grads = []
    for i, (x, d) in enumerate(zip(xs, ds)):
        if d is None:
            grads.append(xp.zeros_like(x))
        else:
            grads.append(xp.sum(d, axis=tuple(j for j in range(n) if j != i)).astype(x.dtype))
    return {"X@GRAD": grads}


@kernel("allclose", FLOATS)
def allclose(inputs, attrs):
    ok = xp.allclose(
        inputs["Input"],
        inputs["Other"],
        rtol=attrs["rtol"],
        atol=attrs["atol"],
        equal_nan=attrs["equal_nan"],
    )
    return {"Out": xp.asarray([bool(ok)])}


@kernel("randperm", ("int32", "int64", "float32", "float64"))
def randperm(inputs, attrs):
    perm = permutation(xp, rng_for(xp, attrs["seed"]), attrs["n"])
    return {"Out": perm.astype(attrs["dtype"])}
