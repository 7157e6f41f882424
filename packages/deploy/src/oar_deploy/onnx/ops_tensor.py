"""ONNX converters: reshape/transpose/concat/split/slice/gather, embedding, flatten, squeeze..."""

from __future__ import annotations

from typing import Any

import numpy as np

from oar_deploy.onnx.export import Graph, converter, onnx_dtype


def _no_tensor_inputs(g: Graph, op: Any, *slots: str) -> None:
    for s in slots:
        if op.input(s):
            g.fail(f"the {s} input (a shape given at run time) is not exported; use the attr")


@converter("reshape2", "reshape")
def _reshape(g: Graph, op: Any) -> None:
    _no_tensor_inputs(g, op, "Shape", "ShapeTensor")
    shape = g.const([int(d) for d in op.attr("shape")], np.int64, "shape")
    g.node("Reshape", [g.x("X"), shape], g.y("Out"))


@converter("transpose2", "transpose")
def _transpose(g: Graph, op: Any) -> None:
    g.node("Transpose", [g.x("X")], g.y("Out"), perm=[int(a) for a in op.attr("axis")])


@converter("concat")
def _concat(g: Graph, op: Any) -> None:
    _no_tensor_inputs(g, op, "AxisTensor")
    ins = [g.x("X", i) for i in range(len(op.input("X")))]
    g.node("Concat", ins, g.y("Out"), axis=int(op.attr("axis")))


@converter("split")
def _split(g: Graph, op: Any) -> None:
    _no_tensor_inputs(g, op, "AxisTensor", "SectionsTensorList")
    outs = op.output("Out")
    x_name = op.input("X")[0]
    axis = int(op.attr("axis")) % g.rank(x_name)
    sections = [int(s) for s in op.attr("sections") or []]
    if sections and -1 in sections:
        dim = g.shape(x_name)[axis]
        if dim is None or dim < 0:
            g.fail("a -1 section needs the split dim to be known")
        sections[sections.index(-1)] = dim - sum(s for s in sections if s != -1)
    ins = [g.x("X")]
    if sections:
        ins.append(g.const(sections, np.int64, "split"))
    g.node("Split", ins, outs, axis=axis)


@converter("slice")
def _slice(g: Graph, op: Any) -> None:
    _no_tensor_inputs(g, op, "StartsTensor", "EndsTensor", "StartsTensorList", "EndsTensorList")
    axes = [int(a) for a in op.attr("axes")]
    big = np.iinfo(np.int64).max
    ends = [min(int(e), big) for e in op.attr("ends")]
    ins = [
        g.x("Input"),
        g.const([int(s) for s in op.attr("starts")], np.int64, "starts"),
        g.const(ends, np.int64, "ends"),
        g.const(axes, np.int64, "axes"),
    ]
    decrease = [int(a) for a in op.attr("decrease_axis") or []]
    if not decrease:
        g.node("Slice", ins, g.y("Out"))
        return
    sliced = g.node("Slice", ins)
    if len(decrease) == g.rank(op.input("Input")[0]):  # Fluid keeps shape [1]
        g.node("Reshape", [sliced, g.const([1], np.int64, "shape")], g.y("Out"))
    else:
        g.node("Squeeze", [sliced, g.const(decrease, np.int64, "axes")], g.y("Out"))


def _flat_index(g: Graph, name: str, slot: str) -> str:
    shape = g.shape(name)
    if shape is not None and len(shape) == 2 and shape[-1] == 1:
        return g.node("Squeeze", [g.x(slot), g.const([1], np.int64, "axes")])
    return g.x(slot)


@converter("gather")
def _gather(g: Graph, op: Any) -> None:
    _no_tensor_inputs(g, op, "Axis")
    idx = _flat_index(g, op.input("Index")[0], "Index")
    g.node("Gather", [g.x("X"), idx], g.y("Out"), axis=0)


@converter("lookup_table", "lookup_table_v2")
def _embedding(g: Graph, op: Any) -> None:
    w = g.param(op.input("W")[0])
    if w is None:
        g.fail("the embedding table W must be a parameter")
    pad = op.attr("padding_idx")
    if pad is not None and int(pad) != -1:
        w = w.copy()
        w[int(pad) % w.shape[0]] = 0  # Fluid outputs zeros for padding_idx
    table = g.const(w, w.dtype, "table")
    ids_name = op.input("Ids")[0]
    ids = g.x("Ids")
    shape = g.shape(ids_name)
    if op.type == "lookup_table" and shape is not None and shape[-1] == 1:
        ids = g.node("Squeeze", [ids, g.const([len(shape) - 1], np.int64, "axes")])
    g.node("Gather", [table, ids], g.y("Out"), axis=0)


@converter("flatten2", "flatten")
def _flatten(g: Graph, op: Any) -> None:
    g.node("Flatten", [g.x("X")], g.y("Out"), axis=int(op.attr("axis")))


@converter("squeeze2", "squeeze")
def _squeeze(g: Graph, op: Any) -> None:
    axes = [int(a) for a in op.attr("axes") or []]
    ins = [g.x("X")] + ([g.const(axes, np.int64, "axes")] if axes else [])
    g.node("Squeeze", ins, g.y("Out"))


@converter("unsqueeze2", "unsqueeze")
def _unsqueeze(g: Graph, op: Any) -> None:
    _no_tensor_inputs(g, op, "AxesTensor", "AxesTensorList")
    axes = g.const([int(a) for a in op.attr("axes")], np.int64, "axes")
    g.node("Unsqueeze", [g.x("X"), axes], g.y("Out"))


@converter("stack")
def _stack(g: Graph, op: Any) -> None:
    names = op.input("X")
    axis = int(op.attr("axis"))
    if axis < 0:
        axis += g.rank(names[0]) + 1
    ax = g.const([axis], np.int64, "axes")
    parts = [g.node("Unsqueeze", [g.x("X", i), ax]) for i in range(len(names))]
    g.node("Concat", parts, g.y("Y"), axis=axis)


@converter("assign")
def _assign(g: Graph, op: Any) -> None:
    g.node("Identity", [g.x("X")], g.y("Out"))


@converter("shape")
def _shape(g: Graph, op: Any) -> None:
    g.node("Cast", [g.node("Shape", [g.x("Input")])], g.y("Out"), to=onnx_dtype("int32"))


@converter("arg_max", "arg_min")
def _arg(g: Graph, op: Any) -> None:
    if op.attr("flatten"):
        g.fail("flatten=True is not exported")
    kind = "ArgMax" if op.type == "arg_max" else "ArgMin"
    out = g.node(
        kind, [g.x("X")], axis=int(op.attr("axis")), keepdims=int(bool(op.attr("keepdims")))
    )
    dtype = op.attr("dtype")
    from oar.api import convert_dtype

    to = onnx_dtype(convert_dtype(dtype)) if dtype not in (None, -1) else onnx_dtype("int64")
    g.node("Cast", [out], g.y("Out"), to=to)


@converter("expand")
def _expand(g: Graph, op: Any) -> None:
    _no_tensor_inputs(g, op, "ExpandTimes", "expand_times_tensor")
    reps = g.const([int(t) for t in op.attr("expand_times")], np.int64, "repeats")
    g.node("Tile", [g.x("X"), reps], g.y("Out"))


@converter("fill_constant")
def _fill_constant(g: Graph, op: Any) -> None:
    _no_tensor_inputs(g, op, "ShapeTensor", "ShapeTensorList", "ValueTensor")
    from oar.api import convert_dtype

    dt = np.dtype(convert_dtype(op.attr("dtype")))
    value = np.full([int(d) for d in op.attr("shape")], op.attr("value"), dt)
    g.node("Identity", [g.const(value, dt, "fill")], g.y("Out"))
