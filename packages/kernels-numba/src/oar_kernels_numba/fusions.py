"""Fused kernels this plugin offers to the plan (``oar_register_fusions``): bias add + relu,
and its gradient relu_grad + elementwise_add_grad.

An fc or conv with ``act="relu"`` appends ``elementwise_add`` (the bias, broadcast
along ``axis``) and ``relu``; fused, the sum is never written to memory: one pass
computes ``max(x + b, 0)`` (the same float operations as the two numpy kernels, so
bit for bit their result). The intermediate sum is returned as a shape stand-in,
which is all ``elementwise_add_grad`` reads of it. Shapes the loop does not cover go
through the two ops' registered kernels.

Backward, an fc's ``relu_grad`` and ``elementwise_add_grad`` become one pass writing
``dx = dout * (y > 0)`` and summing it over the rows into the bias gradient (the rows
in order, as numpy's axis-0 sum: within float tolerance of the unfused result, which
may sum in pieces on several threads).
"""

from __future__ import annotations

import math

import numpy as np
from oar.api import registries, shape_stand_in

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
        from oar_kernels_numba._fused_loops import bias_relu as _bias_relu
        from oar_kernels_numba._fused_loops import bias_relu_rows as _bias_relu_rows

        def bias_relu(inputs, attrs):
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
            out = np.empty_like(x)
            if inner == 1:  # an fc's (batch, C): the 2-D loop vectorises over C
                shape2 = (outer, b.shape[0])
                _bias_relu_rows(x.size, x.reshape(shape2), b, out.reshape(shape2))
            else:
                shape3 = (outer, b.shape[0], inner)
                _bias_relu(x.size, x.reshape(shape3), b, out.reshape(shape3))
            return {"0.Out": shape_stand_in(x), "1.Out": out}

        return bias_relu

    return make


def _unfused_grad(inputs, attrs, device, wanted):
    d = inputs["0.Out@GRAD"]
    kernels = registries().kernels
    relu = kernels.lookup("relu_grad", device, d.dtype.name)
    add = kernels.lookup("elementwise_add_grad", device, d.dtype.name)
    ins = {"Out": inputs["0.Out"], "Out@GRAD": d}
    if relu.inplace:
        t = relu.kernel(ins, attrs["0"], donated=frozenset())["X@GRAD"]
    else:
        t = relu.kernel(ins, attrs["0"])["X@GRAD"]
    ins = {"X": inputs["1.X"], "Y": inputs["1.Y"], "Out@GRAD": t}
    res = add.kernel(ins, attrs["1"], wanted) if add.wants_outputs else add.kernel(ins, attrs["1"])
    return {"0.X@GRAD": shape_stand_in(t), **{f"1.{k}": v for k, v in res.items()}}


def _make_relu_bias_grad(device: str):
    wanted = frozenset({"X@GRAD", "Y@GRAD"})

    def make(ops, block):
        add = ops[1]
        if any(not add.outputs.get(slot) for slot in wanted) or load_numba() is None:
            return None  # the fused kernel writes both gradients
        from oar_kernels_numba._fused_loops import relu_grad_bias_rows

        def relu_bias_grad(inputs, attrs):
            y, d, b = inputs["0.Out"], inputs["0.Out@GRAD"], inputs["1.Y"]
            axis = attrs["1"].get("axis", -1)
            if (
                type(d) is not np.ndarray
                or d.ndim != 2
                or d.size < SMALL
                or d.dtype not in FLOAT_DTYPES
                or type(y) is not np.ndarray
                or y.shape != d.shape
                or y.dtype != d.dtype
                or getattr(b, "shape", None) != (d.shape[1],)
                or b.dtype != d.dtype
                or axis not in (-1, 1)
                or inputs["1.X"].shape != d.shape
                or not (d.flags.c_contiguous and y.flags.c_contiguous)
            ):
                return _unfused_grad(inputs, attrs, device, wanted)
            dx = np.empty_like(d)
            db = np.empty(d.shape[1], d.dtype)
            relu_grad_bias_rows(y, d, dx, db)
            return {"0.X@GRAD": shape_stand_in(dx), "1.X@GRAD": dx, "1.Y@GRAD": db}

        return relu_bias_grad

    return make


def _call(entry, ins, attrs, wanted):
    if entry.inplace:
        return entry.kernel(ins, attrs, donated=frozenset())
    return entry.kernel(ins, attrs, wanted) if entry.wants_outputs else entry.kernel(ins, attrs)


def _unfused_loss_grad(inputs, attrs, device):
    p = inputs["1.X"]
    kernels = registries().kernels
    ops = ("mean_grad", "cross_entropy_grad", "softmax_grad")
    mean_g, ce_g, sm_g = (kernels.lookup(op, device, p.dtype.name) for op in ops)
    x = frozenset({"X@GRAD"})
    d0 = _call(mean_g, {"X": inputs["0.X"], "Out@GRAD": inputs["0.Out@GRAD"]}, attrs["0"], x)
    ins = {"X": p, "Label": inputs["1.Label"], "Y@GRAD": d0["X@GRAD"]}
    d1 = _call(ce_g, ins, attrs["1"], x)
    d2 = _call(sm_g, {"Out": inputs["2.Out"], "Out@GRAD": d1["X@GRAD"]}, attrs["2"], x)
    return {
        "0.X@GRAD": shape_stand_in(d0["X@GRAD"]),
        "1.X@GRAD": shape_stand_in(d1["X@GRAD"]),
        "2.X@GRAD": d2["X@GRAD"],
    }


def _make_loss_grad(device: str):
    """mean_grad + cross_entropy_grad + softmax_grad of ``mean(cross_entropy(softmax(z)))``
    (hard labels, softmax over the last axis of a 2-D input): one pass writing dz."""

    def make(ops, block):
        if ops[1].attrs.get("soft_label") or ops[2].attrs.get("axis", -1) not in (-1, 1):
            return None
        if ops[1].input("X") != ops[2].input("Out") or load_numba() is None:
            return None  # the cross-entropy of another tensor than this softmax's output
        from oar_kernels_numba._fused_loops import mean_ce_softmax_grad_rows

        def loss_grad(inputs, attrs):
            p, lab, y = inputs["1.X"], inputs["1.Label"], inputs["0.X"]
            d = inputs["0.Out@GRAD"]
            if (
                type(p) is not np.ndarray
                or p.ndim != 2
                or p.dtype not in FLOAT_DTYPES
                or not p.flags.c_contiguous
                or type(lab) is not np.ndarray
                or lab.dtype.kind not in "iu"
                or lab.size != p.shape[0]
                or y.shape != (p.shape[0], 1)
                or y.dtype != p.dtype
                or getattr(d, "size", 0) != 1
            ):
                return _unfused_loss_grad(inputs, attrs, device)
            # mean_grad's value: the upstream scalar over the element count, in p's dtype
            dy = p.dtype.type(d.reshape(-1)[0] / max(y.size, 1))
            tiny = np.finfo(p.dtype).tiny
            dx = np.empty_like(p)
            lab1 = lab.reshape(-1).astype(np.int64, copy=False)
            if not mean_ce_softmax_grad_rows(p, lab1, attrs["1"]["ignore_index"], dy, tiny, dx):
                return _unfused_loss_grad(inputs, attrs, device)  # raises the numpy error
            return {
                "0.X@GRAD": shape_stand_in(y),
                "1.X@GRAD": shape_stand_in(p),
                "2.X@GRAD": dx,
            }

        return loss_grad

    return make


def register(registry, device: str, priority: int) -> None:
    registry.register_fusion(
        "bias_add_relu", ("elementwise_add", "relu"), device, _make_bias_relu(device), priority
    )
    registry.register_fusion(
        "relu_bias_grad",
        ("relu_grad", "elementwise_add_grad"),
        device,
        _make_relu_bias_grad(device),
        priority,
    )
    registry.register_fusion(
        "mean_cross_entropy_softmax_grad",
        ("mean_grad", "cross_entropy_grad", "softmax_grad"),
        device,
        _make_loss_grad(device),
        priority,
    )
