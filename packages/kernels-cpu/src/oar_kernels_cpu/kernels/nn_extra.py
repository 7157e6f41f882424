"""Kernels of cvm, random_crop and spectral_norm."""

from __future__ import annotations

from oar_kernels_cpu.kernels import FLOATS, NUMERIC, _gemm, array_module, kernel
from oar_kernels_cpu.kernels._util import rng_for

xp = array_module(__name__)


@kernel("cvm", FLOATS)
def cvm(inputs, attrs):
    x = inputs["X"]
    if not attrs["use_cvm"]:
        return {"Y": xp.ascontiguousarray(x[:, 2:])}
    y = x.copy()
    y[:, 0] = xp.log(x[:, 0] + 1)
    y[:, 1] = xp.log(x[:, 1] + 1) - y[:, 0]
    return {"Y": y}


@kernel("cvm_grad", FLOATS)
def cvm_grad(inputs, attrs):
    # as Fluid: the show/click columns get the CVM values, the others the output gradient
    x, dy, c = inputs["X"], inputs["Y@GRAD"], inputs["CVM"]
    dx = xp.empty_like(x)
    dx[:, :2] = c[:, :2]
    dx[:, 2:] = dy[:, 2:] if attrs["use_cvm"] else dy
    return {"X@GRAD": dx}


@kernel("random_crop", NUMERIC)
def random_crop(inputs, attrs):
    x, shape = inputs["X"], list(attrs["shape"])
    seed = (
        int(xp.asarray(inputs["Seed"]).reshape(-1)[0])
        if inputs.get("Seed") is not None
        else attrs["startup_seed"]
    )
    rng = rng_for(xp, seed)
    lead = x.ndim - len(shape)
    flat = x.reshape((-1,) + x.shape[lead:])
    out = xp.empty((flat.shape[0],) + tuple(shape), x.dtype)
    for i in range(flat.shape[0]):  # one box per instance
        starts = [int(rng.integers(0, d - s + 1)) for d, s in zip(x.shape[lead:], shape)]
        out[i] = flat[(i,) + tuple(slice(a, a + s) for a, s in zip(starts, shape))]
    new_seed = int(rng.integers(1, 2**31 - 1))
    return {
        "Out": out.reshape(x.shape[:lead] + tuple(shape)),
        "SeedOut": xp.asarray([new_seed], dtype="int64"),
    }


def _matrix(w, dim):
    return xp.moveaxis(w, dim, 0).reshape(w.shape[dim], -1)


def _normalize(v, eps):
    return v / (xp.sqrt(xp.sum(v * v)) + eps)


def _u_w_v(u, mat, v) -> float:
    """sigma = u^T W v (the matrix-vector products through ``_gemm``, like every BLAS call of
    the kernels: at one BLAS thread unless large, whatever the thread count under
    ``FLAGS_cpu_deterministic``)."""
    return float(_gemm.matmul(xp, u, mat) @ v)


def _sigma(inputs, attrs):
    """Power iterations on U, V (updated in place, as Fluid), then sigma = u^T W v."""
    w, u, v = inputs["Weight"], inputs["U"], inputs["V"]
    mat = _matrix(w, attrs["dim"])
    for _ in range(attrs["power_iters"]):
        v[...] = _normalize(_gemm.matmul(xp, mat.T, u), attrs["eps"])
        u[...] = _normalize(_gemm.matmul(xp, mat, v), attrs["eps"])
    return mat, u, v, _u_w_v(u, mat, v)


@kernel("spectral_norm", FLOATS)
def spectral_norm(inputs, attrs):
    w = inputs["Weight"]
    _, _, _, sigma = _sigma(inputs, attrs)
    return {"Out": (w / sigma).astype(w.dtype, copy=False)}


@kernel("spectral_norm_grad", FLOATS)
def spectral_norm_grad(inputs, attrs):
    w, d = inputs["Weight"], inputs["Out@GRAD"]
    dim = attrs["dim"]
    mat = _matrix(w, dim)
    u, v = inputs["U"], inputs["V"]
    sigma = _u_w_v(u, mat, v)
    dm = _matrix(d, dim)
    gm = (dm - xp.sum(dm * mat / sigma) * xp.outer(u, v)) / sigma
    moved = xp.moveaxis(w, dim, 0).shape
    return {"Weight@GRAD": xp.moveaxis(gm.reshape(moved), 0, dim).astype(w.dtype, copy=False)}
