"""numpy kernels for reduce_* and their gradients (dout broadcast back over the reduced dims).

Sums, means, maxima and minima of large float tensors are cut into pieces along the leading
axis that the kernel thread pool runs at once (``_split.reduce``: partial results combined in
piece order, the same for any thread count); their gradients' broadcasts likewise.
"""

from __future__ import annotations

import math

from oar.api import reduced_dims

from oar_kernels_cpu.kernels import NUMERIC, _split, array_module, kernel

xp = array_module(__name__)


def _axes(x, attrs) -> tuple:
    return tuple(reduced_dims(x.shape, attrs))


def _reducer(fn, how=None):
    def forward(inputs, attrs):
        x = inputs["X"]
        axes = _axes(x, attrs)
        if how is not None and axes:
            out = _split.reduce(xp, how, x, axes, keepdims=attrs["keep_dim"])
        else:
            out = fn(x, axis=axes, keepdims=attrs["keep_dim"])
        out = xp.asarray(out)
        if out.dtype != x.dtype:
            out = out.astype(x.dtype)
        if out.ndim == 0:
            out = out.reshape(1)
        return {"Out": out}

    return forward


for _name, _fn in {
    "reduce_sum": xp.sum,
    "reduce_mean": xp.mean,
    "reduce_max": xp.max,
    "reduce_min": xp.min,
    "reduce_prod": xp.prod,
}.items():
    _how = _name[7:] if _name != "reduce_prod" else None
    kernel(_name, NUMERIC)(_reducer(_fn, _how))
for _name, _fn in {"reduce_all": xp.all, "reduce_any": xp.any}.items():
    kernel(_name, ("bool",))(_reducer(_fn))


def _kept(a, x, axes):
    """``a`` (a reduced result) reshaped so it broadcasts against ``x``."""
    return a.reshape([1 if i in axes else d for i, d in enumerate(x.shape)])


@kernel("reduce_sum_grad", NUMERIC)
def reduce_sum_grad(inputs, attrs):
    x, d = inputs["X"], inputs["Out@GRAD"]
    axes = _axes(x, attrs)
    return {"X@GRAD": _split.ufunc(xp, xp.positive, xp.broadcast_to(_kept(d, x, axes), x.shape))}


@kernel("reduce_mean_grad", NUMERIC)
def reduce_mean_grad(inputs, attrs):
    x, d = inputs["X"], inputs["Out@GRAD"]
    axes = _axes(x, attrs)
    n = math.prod(x.shape[a] for a in axes)
    g = (_kept(d, x, axes) / max(n, 1)).astype(x.dtype, copy=False)
    return {"X@GRAD": _split.ufunc(xp, xp.positive, xp.broadcast_to(g, x.shape))}


def _extreme_grad(inputs, attrs):
    x, out, d = inputs["X"], inputs["Out"], inputs["Out@GRAD"]
    axes = _axes(x, attrs)
    hit = x == _kept(out, x, axes)
    return {"X@GRAD": (hit * _kept(d, x, axes)).astype(x.dtype, copy=False)}


kernel("reduce_max_grad", NUMERIC)(_extreme_grad)
kernel("reduce_min_grad", NUMERIC)(_extreme_grad)


@kernel("reduce_prod_grad", NUMERIC)
def reduce_prod_grad(inputs, attrs):
    """d prod / d x_i is the product of the others: exclusive cumprods from both ends (zeros are fine)."""
    x, d = inputs["X"], inputs["Out@GRAD"]
    axes = _axes(x, attrs)
    rest = [i for i in range(x.ndim) if i not in axes]
    perm = rest + list(axes)
    xt = x.transpose(perm)
    lead = xt.shape[: len(rest)]
    flat = xt.reshape(lead + (-1,))
    ones = xp.ones(lead + (1,), dtype=x.dtype)
    left = xp.cumprod(xp.concatenate([ones, flat[..., :-1]], axis=-1), axis=-1)
    right = xp.cumprod(xp.concatenate([ones, flat[..., :0:-1]], axis=-1), axis=-1)[..., ::-1]
    others = (
        (left * right).reshape(xt.shape).transpose(sorted(range(len(perm)), key=perm.__getitem__))
    )
    return {"X@GRAD": (others * _kept(d, x, axes)).astype(x.dtype, copy=False)}
