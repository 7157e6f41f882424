"""ONNX converters: linear layers, convolution, pooling, normalisation, activations, softmax."""

from __future__ import annotations

from typing import Any

import numpy as np

from oar_deploy.onnx.export import Graph, converter


def _flatten_lead(g: Graph, x: str, k: int) -> str:
    """``x`` reshaped to ``x.shape[:k] + [-1]`` (what ``mul``'s ``x_num_col_dims`` means)."""
    if g.shape(x) is not None and len(g.shape(x)) == k + 1:
        return x
    return g.node("Reshape", [x, g.const([0] * k + [-1], np.int64, "shape")])


def _act(g: Graph, x: str, act: str, out: str) -> str:
    table = {"relu": "Relu", "sigmoid": "Sigmoid", "tanh": "Tanh"}
    if act in ("", "identity", None):
        return g.node("Identity", [x], out)
    if act not in table:
        g.fail(f"activation '{act}' has no ONNX mapping")
    return g.node(table[act], [x], out)


@converter("mul")
def _mul(g: Graph, op: Any) -> None:
    if op.attr("y_num_col_dims") != 1 or g.rank(op.input("Y")[0]) != 2:
        g.fail("only a 2-D Y with y_num_col_dims=1 is exported")
    x = _flatten_lead(g, g.x("X"), op.attr("x_num_col_dims"))
    g.node("MatMul", [x, g.x("Y")], g.y("Out"))


@converter("fc")
def _fc(g: Graph, op: Any) -> None:
    x = _flatten_lead(g, g.x("Input"), op.attr("in_num_col_dims"))
    out = g.node("MatMul", [x, g.x("W")])
    if g.has("Bias"):
        bias = g.param(op.input("Bias")[0])
        out = g.node("Add", [out, g.const(bias.reshape(-1), bias.dtype, "bias")])
    _act(g, out, op.attr("activation_type"), g.y("Out"))


@converter("matmul")
def _matmul(g: Graph, op: Any) -> None:
    x, y = g.x("X"), g.x("Y")
    rx, ry = g.rank(op.input("X")[0]), g.rank(op.input("Y")[0])
    if rx < 2 or ry < 2:
        g.fail("1-D operands are not exported")
    if op.attr("transpose_X"):
        x = g.node("Transpose", [x], perm=list(range(rx - 2)) + [rx - 1, rx - 2])
    if op.attr("transpose_Y"):
        y = g.node("Transpose", [y], perm=list(range(ry - 2)) + [ry - 1, ry - 2])
    alpha = float(op.attr("alpha") if op.attr("alpha") is not None else 1.0)
    if alpha == 1.0:
        g.node("MatMul", [x, y], g.y("Out"))
    else:
        out = g.node("MatMul", [x, y])
        g.node("Mul", [out, g.const(alpha, g.dtype(op.output("Out")[0]))], g.y("Out"))


def _conv_pads(g: Graph, op: Any) -> dict:
    if op.attr("data_format") not in ("NCHW", "AnyLayout", None):
        g.fail(f"data_format {op.attr('data_format')} is not exported (NCHW only)")
    algo = op.attr("padding_algorithm") or "EXPLICIT"
    kw: dict = {
        "strides": list(op.attr("strides")),
        "dilations": list(op.attr("dilations") or [1, 1]),
        "group": int(op.attr("groups") or 1),
    }
    if algo == "SAME":
        kw["auto_pad"] = "SAME_UPPER"
        return kw
    p = [0, 0] if algo == "VALID" else list(op.attr("paddings"))
    if len(p) == 2:
        p = [p[0], p[0], p[1], p[1]]
    kw["pads"] = [p[0], p[2], p[1], p[3]]  # Fluid: top, bottom, left, right
    return kw


@converter("conv2d", "depthwise_conv2d", "conv2d_fusion")
def _conv(g: Graph, op: Any) -> None:
    ins = [g.x("Input"), g.x("Filter")]
    if g.has("Bias"):
        ins.append(g.x("Bias"))
    out = g.y("Output")
    act = op.attr("activation") if op.type == "conv2d_fusion" else None
    if act in (None, "identity", ""):
        g.node("Conv", ins, out, **_conv_pads(g, op))
    else:
        _act(g, g.node("Conv", ins, **_conv_pads(g, op)), act, out)


@converter("conv2d_transpose", "depthwise_conv2d_transpose")
def _conv_t(g: Graph, op: Any) -> None:
    kw = _conv_pads(g, op)
    if list(op.attr("output_size") or []):
        g.fail("output_size is not exported")
    if "auto_pad" in kw:
        g.fail("padding_algorithm SAME is not exported for transposed convolutions")
    g.node("ConvTranspose", [g.x("Input"), g.x("Filter")], g.y("Output"), **kw)


@converter("pool2d")
def _pool(g: Graph, op: Any) -> None:
    if op.attr("data_format") not in ("NCHW", "AnyLayout", None):
        g.fail("data_format NHWC is not exported")
    kind = op.attr("pooling_type")
    x, out = g.x("X"), g.y("Out")
    ksize = list(op.attr("ksize"))
    if op.attr("global_pooling") or (op.attr("adaptive") and ksize == [1, 1]):
        g.node("GlobalMaxPool" if kind == "max" else "GlobalAveragePool", [x], out)
        return
    kw = _conv_pads(g, _PoolView(op))
    kw.pop("group"), kw.pop("dilations")
    kw["kernel_shape"] = ksize
    if op.attr("adaptive"):
        kw.update(_adaptive_windows(g, op, ksize))
    kw["ceil_mode"] = int(bool(op.attr("ceil_mode")))
    if kind == "max":
        g.node("MaxPool", [x], out, **kw)
    else:
        kw["count_include_pad"] = 0 if op.attr("exclusive") in (True, None) else 1
        g.node("AveragePool", [x], out, **kw)


def _adaptive_windows(g: Graph, op: Any, out_size: list) -> dict:
    """Adaptive pooling as plain pooling, when its bins have one size and a regular stride.

    Bin ``i`` of ``n`` over ``d`` covers ``[floor(i*d/n), ceil((i+1)*d/n))``.
    """
    hw = (g.shape(op.input("X")[0]) or [])[2:]
    kernel, strides = [], []
    for d, n in zip(hw, out_size):
        if d is None or d <= 0:
            g.fail(f"adaptive pooling needs known input spatial dims (given {hw})")
        starts = [i * d // n for i in range(n)]
        sizes = {-(-(i + 1) * d // n) - s for i, s in enumerate(starts)}
        steps = {b - a for a, b in zip(starts, starts[1:])} or {1}
        if len(sizes) != 1 or len(steps) != 1:
            g.fail(f"adaptive pooling of {d} into {n} bins has irregular bins")
        kernel.append(sizes.pop())
        strides.append(steps.pop())
    return {"kernel_shape": kernel, "strides": strides, "pads": [0, 0, 0, 0]}


class _PoolView:
    """pool2d's attrs under the names the conv padding helper reads."""

    def __init__(self, op: Any) -> None:
        self._op = op

    def attr(self, name: str) -> Any:
        return {"groups": 1, "dilations": [1, 1]}.get(name, self._op.attr(name))


@converter("batch_norm")
def _batch_norm(g: Graph, op: Any) -> None:
    if op.attr("data_layout") not in ("NCHW", "AnyLayout", None):
        g.fail("data_layout NHWC is not exported")
    if not (op.attr("is_test") or op.attr("use_global_stats")):
        g.fail("training-mode batch_norm is not exported (save the model for inference)")
    ins = [g.x(s) for s in ("X", "Scale", "Bias", "Mean", "Variance")]
    g.node("BatchNormalization", ins, g.y("Y"), epsilon=float(op.attr("epsilon")))


@converter("layer_norm")
def _layer_norm(g: Graph, op: Any) -> None:
    x = g.x("X")
    shape = g.shape(op.input("X")[0])
    a = op.attr("begin_norm_axis")
    axes = list(range(a, len(shape)))
    if any(d is None or d < 0 for d in shape[a:]):
        g.fail("the normalised dims must be known")
    mean = g.node("ReduceMean", [x], axes=axes, keepdims=1)
    d = g.node("Sub", [x, mean])
    var = g.node("ReduceMean", [g.node("Mul", [d, d])], axes=axes, keepdims=1)
    dt = g.dtype(op.input("X")[0])
    std = g.node("Sqrt", [g.node("Add", [var, g.const(op.attr("epsilon"), dt, "eps")])])
    y = g.node("Div", [d, std])
    for slot, onnx_op in (("Scale", "Mul"), ("Bias", "Add")):
        if g.has(slot):
            arr = g.param(op.input(slot)[0])
            if arr is None:
                g.fail(f"{slot} must be a parameter")
            y = g.node(onnx_op, [y, g.const(arr.reshape(shape[a:]), arr.dtype, slot.lower())])
    g.node("Identity", [y], g.y("Y"))


@converter("softmax")
def _softmax(g: Graph, op: Any) -> None:
    g.node("Softmax", [g.x("X")], g.y("Out"), axis=int(op.attr("axis")))


@converter("log_softmax")
def _log_softmax(g: Graph, op: Any) -> None:
    g.node("LogSoftmax", [g.x("X")], g.y("Out"), axis=int(op.attr("axis")))


_UNARY = {
    "relu": "Relu",
    "sigmoid": "Sigmoid",
    "tanh": "Tanh",
    "exp": "Exp",
    "log": "Log",
    "sqrt": "Sqrt",
    "abs": "Abs",
    "softplus": "Softplus",
    "softsign": "Softsign",
    "floor": "Floor",
    "ceil": "Ceil",
    "reciprocal": "Reciprocal",
    "sin": "Sin",
    "cos": "Cos",
    "sign": "Sign",
    "round": "Round",
}


def _unary(g: Graph, op: Any) -> None:
    g.node(_UNARY[op.type], [g.x("X")], g.y("Out"))


for _t in _UNARY:
    converter(_t)(_unary)


@converter("leaky_relu")
def _leaky(g: Graph, op: Any) -> None:
    g.node("LeakyRelu", [g.x("X")], g.y("Out"), alpha=float(op.attr("alpha")))


@converter("elu")
def _elu(g: Graph, op: Any) -> None:
    g.node("Elu", [g.x("X")], g.y("Out"), alpha=float(op.attr("alpha")))


@converter("relu6")
def _relu6(g: Graph, op: Any) -> None:
    dt = g.dtype(op.input("X")[0])
    lo, hi = g.const(0.0, dt, "lo"), g.const(float(op.attr("threshold")), dt, "hi")
    g.node("Clip", [g.x("X"), lo, hi], g.y("Out"))


@converter("hard_sigmoid")
def _hard_sigmoid(g: Graph, op: Any) -> None:
    g.node(
        "HardSigmoid",
        [g.x("X")],
        g.y("Out"),
        alpha=float(op.attr("slope")),
        beta=float(op.attr("offset")),
    )


@converter("swish")
def _swish(g: Graph, op: Any) -> None:
    x, dt = g.x("X"), g.dtype(op.input("X")[0])
    s = g.node("Sigmoid", [g.node("Mul", [x, g.const(float(op.attr("beta")), dt, "beta")])])
    g.node("Mul", [x, s], g.y("Out"))


@converter("gelu")
def _gelu(g: Graph, op: Any) -> None:
    if op.attr("approximate"):
        g.fail("approximate (tanh) gelu is not exported")
    x, dt = g.x("X"), g.dtype(op.input("X")[0])
    erf = g.node("Erf", [g.node("Div", [x, g.const(np.sqrt(2.0), dt, "sqrt2")])])
    half_x = g.node("Mul", [x, g.const(0.5, dt, "half")])
    g.node("Mul", [half_x, g.node("Add", [erf, g.const(1.0, dt, "one")])], g.y("Out"))


@converter("square")
def _square(g: Graph, op: Any) -> None:
    x = g.x("X")
    g.node("Mul", [x, x], g.y("Out"))


@converter("rsqrt")
def _rsqrt(g: Graph, op: Any) -> None:
    g.node("Reciprocal", [g.node("Sqrt", [g.x("X")])], g.y("Out"))


@converter("dropout")
def _dropout(g: Graph, op: Any) -> None:
    if not op.attr("is_test"):
        g.fail("training-mode dropout is not exported (save the model for inference)")
    if op.attr("dropout_implementation") == "upscale_in_train":
        g.node("Identity", [g.x("X")], g.y("Out"))
        return
    dt = g.dtype(op.input("X")[0])
    factor = g.const(1.0 - float(op.attr("dropout_prob")), dt, "keep")
    g.node("Mul", [g.x("X"), factor], g.y("Out"))
