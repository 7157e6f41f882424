"""Fused kernels this plugin offers to the plan (``oar_register_fusions``): bias add + relu,
and its gradient relu_grad + elementwise_add_grad; the loss's (``loss_fusions``) and the
optimizer's (``adam_group``) are registered here too.

An fc or conv with ``act="relu"`` appends ``elementwise_add`` (the bias, broadcast
along ``axis``) and ``relu``; fused, the sum is never written to memory: one pass
computes ``max(x + b, 0)`` (the same float operations as the two numpy kernels, so
bit for bit their result). The intermediate sum is returned as a shape stand-in,
which is all ``elementwise_add_grad`` reads of it. The fusion is registered ``inplace``:
where the plan donates the dying product (the conv's or mul's output), the activation is
written over it. Shapes the loop does not cover go
through the two ops' registered kernels.

Backward, an fc's or a conv's ``relu_grad`` and ``elementwise_add_grad`` become one call
writing ``dx = dout * (y > 0)`` and summing it into the bias gradient: an fc's rows in
order, as numpy's axis-0 sum; a conv's (N, C, H, W) gradient in one compiled pass, then
summed by one numpy call whatever the thread count (within float tolerance of the unfused
result, which may sum in pieces on several threads). The fusion is registered ``inplace``: where
the plan donates the dying ``dout`` (or ``y``), ``dx`` is written into it instead of a
fresh array, as the numpy ``relu_grad`` does.
"""

from __future__ import annotations

import math

import numpy as np
from oar.api import registries, shape_stand_in

from oar_kernels_numba import loss_fusions
from oar_kernels_numba._limits import SMALL
from oar_kernels_numba.compat import load_numba

DTYPES = ("float32", "float64")
FLOAT_DTYPES = frozenset(np.dtype(t) for t in DTYPES)  # dtype.name costs ~1 µs a call


def _unfused(inputs, attrs, device):
    x = inputs["0.X"]
    kernels = registries().kernels  # lookups are cached by the registry
    add = kernels.lookup("elementwise_add", device, x.dtype.name)
    relu = kernels.lookup("relu", device, x.dtype.name)
    t = add.kernel({"X": x, "Y": inputs["0.Y"]}, attrs["0"])["Out"]
    if relu.inplace:
        out = relu.kernel({"X": t}, attrs["1"], donated=frozenset({"X"}))["Out"]
    else:
        out = relu.kernel({"X": t}, attrs["1"])["Out"]
    return {"0.Out": shape_stand_in(t), "1.Out": out}


def _make_bias_relu(device: str):
    def make(ops, block):
        if ops[0].attrs.get("act") or load_numba() is None:
            return None
        from oar_kernels_numba import _fused_loops as fl

        def bias_relu(inputs, attrs, donated=frozenset()):
            x, b = inputs["0.X"], inputs["0.Y"]
            axis = attrs["0"].get("axis", -1)
            axis = x.ndim - b.ndim if axis == -1 else axis
            if (
                type(x) is not np.ndarray
                or x.size < SMALL
                or type(b) is not np.ndarray
                or x.dtype not in FLOAT_DTYPES
                or b.dtype != x.dtype
                or b.ndim != 1
                or not 0 <= axis < x.ndim
                or x.shape[axis] != b.shape[0]
                or not x.flags.c_contiguous
                or not b.flags.c_contiguous
            ):
                return _unfused(inputs, attrs, device)
            outer = math.prod(x.shape[:axis])  # np.prod costs ~4 µs a call
            inner = math.prod(x.shape[axis + 1 :])
            # an fc's (batch, C): the 2-D loops vectorise over C
            shape = (outer, b.shape[0]) if inner == 1 else (outer, b.shape[0], inner)
            if "0.X" in donated:  # the dying pre-bias product becomes the activation
                into = fl.bias_relu_rows_into if inner == 1 else fl.bias_relu_into
                into(x.size, x.reshape(shape), b)
                return {"0.Out": shape_stand_in(x), "1.Out": x}
            out = np.empty_like(x)
            loop = fl.bias_relu_rows if inner == 1 else fl.bias_relu
            loop(x.size, x.reshape(shape), b, out.reshape(shape))
            return {"0.Out": shape_stand_in(out), "1.Out": out}

        return bias_relu

    return make


def _unfused_grad(inputs, attrs, device, wanted, donated=frozenset()):
    d = inputs["0.Out@GRAD"]
    kernels = registries().kernels
    relu = kernels.lookup("relu_grad", device, d.dtype.name)
    add = kernels.lookup("elementwise_add_grad", device, d.dtype.name)
    ins = {"Out": inputs["0.Out"], "Out@GRAD": d}
    if relu.inplace:
        mine = frozenset(s[2:] for s in donated if s in _RELU_DONATABLE)
        t = relu.kernel(ins, attrs["0"], donated=mine)["X@GRAD"]
    else:
        t = relu.kernel(ins, attrs["0"])["X@GRAD"]
    ins = {"X": inputs["1.X"], "Y": inputs["1.Y"], "Out@GRAD": t}
    res = add.kernel(ins, attrs["1"], wanted) if add.wants_outputs else add.kernel(ins, attrs["1"])
    return {"0.X@GRAD": shape_stand_in(t), **{f"1.{k}": v for k, v in res.items()}}


_RELU_DONATABLE = frozenset({"0.Out", "0.Out@GRAD"})


def _bias_layout(d, y, b, axis):
    """``(outer, C, inner)`` of a bias gradient the compiled loops cover: ``d`` and ``y`` alike,
    C-contiguous and large enough, ``b`` one value per index of ``d``'s ``axis``; else None."""
    if (
        type(d) is not np.ndarray
        or type(y) is not np.ndarray
        or type(b) is not np.ndarray
        or d.size < SMALL
        or d.dtype not in FLOAT_DTYPES
        or y.dtype != d.dtype
        or b.dtype != d.dtype
        or y.shape != d.shape
        or b.ndim != 1
        or not (d.flags.c_contiguous and y.flags.c_contiguous)
    ):
        return None
    axis = d.ndim - 1 if axis == -1 else axis
    if not 0 <= axis < d.ndim or d.shape[axis] != b.shape[0]:
        return None
    return math.prod(d.shape[:axis]), b.shape[0], math.prod(d.shape[axis + 1 :])


def _make_relu_bias_grad(device: str):
    wanted = frozenset({"X@GRAD", "Y@GRAD"})

    def make(ops, block):
        add = ops[1]
        if any(not add.outputs.get(slot) for slot in wanted) or load_numba() is None:
            return None  # the fused kernel writes both gradients
        from oar_kernels_numba._fused_loops import relu_grad_bias_rows
        from oar_kernels_numba.activation import relu_grad_to

        def relu_bias_grad(inputs, attrs, donated=frozenset()):
            y, d, b = inputs["0.Out"], inputs["0.Out@GRAD"], inputs["1.Y"]
            layout = _bias_layout(d, y, b, attrs["1"].get("axis", -1))
            if layout is None or inputs["1.X"].shape != d.shape:
                return _unfused_grad(inputs, attrs, device, wanted, donated)
            # the gradient overwrites a dying input where the plan donates one
            if "0.Out@GRAD" in donated:
                dx = d
            elif "0.Out" in donated:
                dx = y
            else:
                dx = np.empty_like(d)
            db = np.empty(b.shape[0], d.dtype)
            outer, c, inner = layout
            if inner == 1:  # an fc's (batch, C)
                shape2 = (outer, c)
                relu_grad_bias_rows(y.reshape(shape2), d.reshape(shape2), dx.reshape(shape2), db)
            else:  # a conv's (N, C, H, W) with the bias along C: the relu pass vectorises,
                # and numpy's sum over the rest beats a sum in the same loop (0.38 against
                # 0.8 ms for MNIST's first layer, whose order-bound adds do not vectorise)
                relu_grad_to(y, d, dx)
                np.sum(dx.reshape(outer, c, inner), axis=(0, 2), out=db)
            return {"0.X@GRAD": shape_stand_in(dx), "1.X@GRAD": dx, "1.Y@GRAD": db}

        return relu_bias_grad

    return make


def register(registry, device: str, priority: int) -> None:
    from oar_kernels_numba.adam_group import make_adam_group

    registry.register_fusion(
        "adam_group",
        ("adam",),
        device,
        make_adam_group(device),
        priority,
        repeated=True,
        selected_rows=True,
    )
    registry.register_fusion(
        "bias_add_relu",
        ("elementwise_add", "relu"),
        device,
        _make_bias_relu(device),
        priority,
        inplace=True,
    )
    registry.register_fusion(
        "relu_bias_grad",
        ("relu_grad", "elementwise_add_grad"),
        device,
        _make_relu_bias_grad(device),
        priority,
        inplace=True,
    )
    loss_fusions.register(registry, device, priority)
