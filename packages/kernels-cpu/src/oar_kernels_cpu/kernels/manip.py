"""numpy kernels for concat/split/stack/unstack, the view ops (transpose2, squeeze2, unsqueeze2,
flatten2) and expand/expand_as."""

from __future__ import annotations

import itertools
import math

from oar.api import split_sizes, squeeze_shape, unsqueeze_shape

from oar_kernels_cpu.kernels import array_module, kernel

xp = array_module(__name__)


def _scalar(t) -> int:
    return int(xp.asarray(t).reshape(-1)[0])


def _axis(inputs, attrs, rank):
    a = _scalar(inputs["AxisTensor"]) if inputs.get("AxisTensor") is not None else attrs["axis"]
    return a % rank


@kernel("concat")
def concat(inputs, attrs):
    xs = inputs["X"]
    axis = _axis(inputs, attrs, xs[0].ndim)
    try:
        return {"Out": xp.concatenate(xs, axis=axis)}
    except ValueError:
        raise ValueError(
            f"concat: inputs of shapes {[list(x.shape) for x in xs]} must match except at "
            f"axis {axis}"
        ) from None


@kernel("concat_grad", wants_outputs=True)
def concat_grad(inputs, attrs, wanted):
    xs, d = inputs["X"], inputs["Out@GRAD"]
    axis = _axis(inputs, attrs, d.ndim)
    cuts = list(itertools.accumulate(x.shape[axis] for x in xs))[:-1]
    return {"X@GRAD": xp.split(d, cuts, axis=axis)}


@kernel("split")
def split(inputs, attrs):
    x = inputs["X"]
    axis = _axis(inputs, attrs, x.ndim)
    sections = attrs["sections"]
    if inputs.get("SectionsTensorList"):
        sections = [_scalar(t) for t in inputs["SectionsTensorList"]]
    sizes = split_sizes(x.shape[axis], attrs["num"], sections)
    return {"Out": xp.split(x, list(itertools.accumulate(sizes))[:-1], axis=axis)}


@kernel("stack")
def stack(inputs, attrs):
    xs = inputs["X"]
    try:
        return {"Y": xp.stack(xs, axis=attrs["axis"] % (xs[0].ndim + 1))}
    except ValueError:
        raise ValueError(
            f"stack: inputs must all have the same shape, given {[list(x.shape) for x in xs]}"
        ) from None


@kernel("stack_grad")
def stack_grad(inputs, attrs):
    d = inputs["Y@GRAD"]
    axis = attrs["axis"] % d.ndim
    return {"X@GRAD": [xp.take(d, i, axis=axis) for i in range(d.shape[axis])]}


@kernel("unstack")
def unstack(inputs, attrs):
    x = inputs["X"]
    axis = attrs["axis"] % x.ndim
    return {"Y": [xp.take(x, i, axis=axis) for i in range(x.shape[axis])]}


@kernel("unstack_grad")
def unstack_grad(inputs, attrs):
    ds = inputs["Y@GRAD"]
    return {"X@GRAD": xp.stack(ds, axis=attrs["axis"] % (ds[0].ndim + 1))}


def _xshape(x):
    return xp.empty((0,) + x.shape, dtype=x.dtype)


@kernel("transpose2")
def transpose2(inputs, attrs):
    x = inputs["X"]
    return {"Out": x.transpose(attrs["axis"]), "XShape": _xshape(x)}


@kernel("transpose2_grad")
def transpose2_grad(inputs, attrs):
    d = inputs["Out@GRAD"]
    axes = [a % d.ndim for a in attrs["axis"]]
    return {"X@GRAD": d.transpose(sorted(range(len(axes)), key=axes.__getitem__))}


@kernel("squeeze2")
def squeeze2(inputs, attrs):
    x = inputs["X"]
    return {"Out": x.reshape(squeeze_shape(list(x.shape), attrs["axes"])), "XShape": _xshape(x)}


@kernel("unsqueeze2")
def unsqueeze2(inputs, attrs):
    x = inputs["X"]
    axes = attrs["axes"]
    if inputs.get("AxesTensor") is not None:
        axes = [int(a) for a in xp.asarray(inputs["AxesTensor"]).reshape(-1)]
    elif inputs.get("AxesTensorList"):
        axes = [_scalar(t) for t in inputs["AxesTensorList"]]
    return {"Out": x.reshape(unsqueeze_shape(list(x.shape), axes)), "XShape": _xshape(x)}


@kernel("flatten2")
def flatten2(inputs, attrs):
    x = inputs["X"]
    a = attrs["axis"]
    rows = math.prod(x.shape[:a])
    return {
        "Out": x.reshape(rows, -1) if x.size else x.reshape(rows, math.prod(x.shape[a:])),
        "XShape": _xshape(x),
    }


def _back_to_xshape(inputs, attrs):
    return {"X@GRAD": inputs["Out@GRAD"].reshape(inputs["XShape"].shape[1:])}


for _op in ("squeeze2", "unsqueeze2", "flatten2"):
    kernel(_op + "_grad")(_back_to_xshape)


def _times(inputs, attrs):
    if inputs.get("ExpandTimes") is not None:
        return [int(t) for t in xp.asarray(inputs["ExpandTimes"]).reshape(-1)]
    if inputs.get("expand_times_tensor"):
        return [_scalar(t) for t in inputs["expand_times_tensor"]]
    return list(attrs["expand_times"])


@kernel("expand")
def expand(inputs, attrs):
    return {"Out": xp.tile(inputs["X"], _times(inputs, attrs))}


def _fold(d, x_shape):
    """Sum a tiled gradient back to ``x_shape``: view it as (t0, d0, t1, d1, ...) and sum the t axes."""
    times = [o // s for o, s in zip(d.shape, x_shape)]
    view = d.reshape([v for t, s in zip(times, x_shape) for v in (t, s)])
    return view.sum(axis=tuple(range(0, 2 * len(x_shape), 2)))


@kernel("expand_grad")
def expand_grad(inputs, attrs):
    x = inputs["X"]
    return {"X@GRAD": _fold(inputs["Out@GRAD"], x.shape).astype(x.dtype, copy=False)}


@kernel("expand_as")
def expand_as(inputs, attrs):
    x, t = inputs["X"], inputs["target_tensor"]
    bad = [i for i, (a, b) in enumerate(zip(x.shape, t.shape)) if b % a]
    if x.ndim != t.ndim or bad:
        raise ValueError(
            f"expand_as: target_tensor shape {list(t.shape)} is not a multiple of X's {list(x.shape)}"
        )
    return {"Out": xp.tile(x, [b // a for a, b in zip(x.shape, t.shape)])}


@kernel("expand_as_grad")
def expand_as_grad(inputs, attrs):
    x = inputs["X"]
    return {"X@GRAD": _fold(inputs["Out@GRAD"], x.shape).astype(x.dtype, copy=False)}
