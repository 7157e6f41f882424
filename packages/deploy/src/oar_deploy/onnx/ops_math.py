"""ONNX converters: elementwise ops with Fluid's axis broadcasting, scale, reductions, cast."""

from __future__ import annotations

from typing import Any

import numpy as np

from oar_deploy.onnx.export import Graph, converter, onnx_dtype

_ELEMENTWISE = {
    "elementwise_add": "Add",
    "elementwise_sub": "Sub",
    "elementwise_mul": "Mul",
    "elementwise_div": "Div",
    "elementwise_max": "Max",
    "elementwise_min": "Min",
    "elementwise_pow": "Pow",
}


def _aligned_y(g: Graph, op: Any) -> str:
    """Y as ONNX's trailing-aligned broadcasting needs it for Fluid's ``axis`` rule."""
    x_name, y_name = op.input("X")[0], op.input("Y")[0]
    rx, ry = g.rank(x_name), g.rank(y_name)
    axis = op.attr("axis")
    axis = -1 if axis is None else int(axis)
    if ry >= rx or axis == -1 or axis + ry == rx:
        return g.x("Y")
    extra = rx - axis - ry
    if extra < 0:
        g.fail(f"axis={axis} does not fit X rank {rx} and Y rank {ry}")
    arr = g.param(y_name)
    if arr is not None:  # a parameter (a bias): reshaped once, in the initializer
        return g.const(arr.reshape(arr.shape + (1,) * extra), arr.dtype, "y")
    axes = g.const(list(range(ry, ry + extra)), np.int64, "axes")
    return g.node("Unsqueeze", [g.x("Y"), axes])


def _elementwise(g: Graph, op: Any) -> None:
    g.node(_ELEMENTWISE[op.type], [g.x("X"), _aligned_y(g, op)], g.y("Out"))


for _t in _ELEMENTWISE:
    converter(_t)(_elementwise)


@converter("scale")
def _scale(g: Graph, op: Any) -> None:
    if g.has("ScaleTensor"):
        g.fail("a ScaleTensor input is not exported")
    dt = g.dtype(op.input("X")[0])
    s, b = float(op.attr("scale")), float(op.attr("bias"))
    x = g.x("X")
    if not op.attr("bias_after_scale") and b:
        x = g.node("Add", [x, g.const(b, dt, "bias")])
        b = 0.0
    if b:
        x = g.node("Mul", [x, g.const(s, dt, "scale")])
        g.node("Add", [x, g.const(b, dt, "bias")], g.y("Out"))
    else:
        g.node("Mul", [x, g.const(s, dt, "scale")], g.y("Out"))


_REDUCE = {
    "reduce_sum": "ReduceSum",
    "reduce_mean": "ReduceMean",
    "reduce_max": "ReduceMax",
    "reduce_min": "ReduceMin",
    "reduce_prod": "ReduceProd",
}


def _to_fluid_shape(g: Graph, value: str, out: str) -> None:
    """ONNX gives a scalar where Fluid keeps shape [1]."""
    shape = g.shape(out)
    if shape == [1]:
        g.node("Reshape", [value, g.const([1], np.int64, "shape")], out)
    else:
        g.node("Identity", [value], out)


def _reduce(g: Graph, op: Any) -> None:
    x_name = op.input("X")[0]
    rank = g.rank(x_name)
    dims = [] if op.attr("reduce_all") else [int(d) % rank for d in op.attr("dim") or []]
    if len(dims) == rank:
        dims = []
    keep = int(bool(op.attr("keep_dim")))
    kind = _REDUCE[op.type]
    if kind == "ReduceSum":
        ins = [g.x("X")] + ([g.const(dims, np.int64, "axes")] if dims else [])
        value = g.node(kind, ins, keepdims=keep)
    elif dims:
        value = g.node(kind, [g.x("X")], axes=dims, keepdims=keep)
    else:
        value = g.node(kind, [g.x("X")], keepdims=keep)
    _to_fluid_shape(g, value, g.y("Out"))


for _t in _REDUCE:
    converter(_t)(_reduce)


@converter("mean")
def _mean(g: Graph, op: Any) -> None:
    _to_fluid_shape(g, g.node("ReduceMean", [g.x("X")], keepdims=0), g.y("Out"))


@converter("sum")
def _sum(g: Graph, op: Any) -> None:
    g.node("Sum", [g.x("X", i) for i in range(len(op.input("X")))], g.y("Out"))


@converter("clip")
def _clip(g: Graph, op: Any) -> None:
    dt = g.dtype(op.input("X")[0])
    lo, hi = g.const(float(op.attr("min")), dt, "min"), g.const(float(op.attr("max")), dt, "max")
    g.node("Clip", [g.x("X"), lo, hi], g.y("Out"))


@converter("cast")
def _cast(g: Graph, op: Any) -> None:
    from oar.api import convert_dtype

    g.node("Cast", [g.x("X")], g.y("Out"), to=onnx_dtype(convert_dtype(op.attr("out_dtype"))))
