"""Passes that fold and fuse: batch_norm into conv/fc weights, fc and conv + bias + activation."""

from __future__ import annotations

from typing import Any

import numpy as np

from oar_deploy.fused_ops import FUSABLE_ACTS
from oar_deploy.passes.graph import PassContext, rewrite_all, var_ndim

CONV_TYPES = ("conv2d", "depthwise_conv2d")


def _single_out(op: Any, slot: str) -> str | None:
    outs = op.output(slot)
    return outs[0] if len(outs) == 1 else None


def _producer(ctx: PassContext, name: str) -> Any:
    for op in ctx.block.ops:
        if name in op.output_arg_names:
            return op
    return None


def _bias_add(ctx: PassContext, op: Any, x: str, consumers: dict, axis_ok: tuple) -> Any:
    """``op``'s output ``x`` read only by ``elementwise_add(x, 1-D parameter, axis in axis_ok)``."""
    add = ctx.only_consumer(x, consumers)
    if add is None or add.type != "elementwise_add" or add.input("X") != [x]:
        return None
    bias = ctx.param(add.input("Y")[0])
    if bias is None or bias.ndim != 1 or add.attr("axis") not in axis_ok:
        return None
    return add


def _linear_producer(ctx: PassContext, name: str, consumers: dict) -> tuple | None:
    """``(weight op, bias add or None, channel axis of the weight)`` producing ``name``, or None."""
    op = _producer(ctx, name)
    if op is None:
        return None
    add = None
    if op.type == "elementwise_add":
        add, x = op, op.input("X")[0]
        if ctx.param(op.input("Y")[0]) is None or ctx.only_consumer(x, consumers) is not op:
            return None
        op = _producer(ctx, x)
        if op is None:
            return None
    if op.type in CONV_TYPES and op.attr("data_format") in ("NCHW", "AnyLayout"):
        axis = 0
    elif op.type == "mul" and var_ndim(ctx, _single_out(op, "Out") or "") == 2:
        axis = 1
    else:
        return None
    w_slot = "Filter" if axis == 0 else "Y"
    if ctx.param(op.input(w_slot)[0]) is None:
        return None
    if add is not None and add.attr("axis") not in ((1,) if axis == 0 else (1, -1)):
        return None
    return op, add, axis


def _match_bn(ctx: PassContext, op: Any, consumers: dict) -> Any:
    if op.type != "batch_norm" or not (op.attr("is_test") or op.attr("use_global_stats")):
        return None
    if op.attr("data_layout") not in ("NCHW", "AnyLayout"):
        return None
    others = [n for s in op.output_names if s != "Y" for n in op.output(s)]
    if any(n in ctx.kept() or any(c is not op for c in consumers.get(n, [])) for n in others):
        return None
    x = op.input("X")[0]
    if ctx.only_consumer(x, consumers) is not op:
        return None
    found = _linear_producer(ctx, x, consumers)
    if found is None or any(ctx.param(op.input(s)[0]) is None for s in _BN_PARAMS):
        return None
    return (op, *found)


_BN_PARAMS = ("Scale", "Bias", "Mean", "Variance")


def _fold_bn(ctx: PassContext, found: tuple) -> None:
    bn, lin, add, axis = found
    scale, shift, mean, var = (ctx.param(bn.input(s)[0]).astype(np.float64) for s in _BN_PARAMS)
    s = scale / np.sqrt(var + float(bn.attr("epsilon")))
    w_slot = "Filter" if axis == 0 else "Y"
    w_name = lin.input(w_slot)[0]
    w = ctx.param(w_name)
    shape = [1] * w.ndim
    shape[axis] = -1
    new_w = ctx.new_param(w_name, (w * s.reshape(shape)).astype(w.dtype))
    lin._rename_input(w_name, new_w)
    y = bn.output("Y")[0]
    if add is not None:
        b_name = add.input("Y")[0]
        b = ctx.param(b_name)
        new_b = ctx.new_param(b_name, ((b - mean) * s + shift).astype(w.dtype))
        add._rename_input(b_name, new_b)
        add._rename_output(add.output("Out")[0], y)
        ctx.remove_ops([bn])
        return
    new_b = ctx.new_param(bn.input("Bias")[0], (shift - mean * s).astype(w.dtype))
    out = lin.output("Output" if axis == 0 else "Out")[0]
    ctx.replace_op([bn], "elementwise_add", {"X": [out], "Y": [new_b]}, {"Out": [y]}, {"axis": 1})


def batch_norm_fold(ctx: PassContext) -> int:
    """Test-mode batch_norm after conv2d / mul (+ bias add) folded into their weights and bias.

    Fluid's ``conv_bn_fuse_pass`` / ``conv_eltwiseadd_bn_fuse_pass`` (and the fc
    equivalent): ``W' = W * s`` and ``b' = (b - mean) * s + beta`` with
    ``s = gamma / sqrt(var + eps)`` per output channel, as new parameters (the
    originals may be shared).
    """
    return rewrite_all(ctx, lambda op, c: _match_bn(ctx, op, c), lambda f: _fold_bn(ctx, f))


def _act_after(ctx: PassContext, name: str, consumers: dict) -> Any:
    act = ctx.only_consumer(name, consumers)
    if act is not None and act.type in FUSABLE_ACTS and act.input("X") == [name]:
        return act
    return None


def _match_fc(ctx: PassContext, op: Any, consumers: dict) -> Any:
    if op.type != "mul" or ctx.param(op.input("Y")[0]) is None:
        return None
    w = ctx.param(op.input("Y")[0])
    if w.ndim != 2 or op.attr("y_num_col_dims") != 1:
        return None
    out = _single_out(op, "Out")
    k = op.attr("x_num_col_dims")
    add = _bias_add(ctx, op, out, consumers, (k, -1))
    if add is None or ctx.param(add.input("Y")[0]).shape != (w.shape[1],):
        return None
    return op, add, _act_after(ctx, add.output("Out")[0], consumers)


def _fuse_fc(ctx: PassContext, found: tuple) -> None:
    mul, add, act = found
    last = act if act is not None else add
    ctx.replace_op(
        [x for x in found if x is not None],
        "fc",
        {"Input": mul.input("X"), "W": mul.input("Y"), "Bias": add.input("Y")},
        {"Out": last.output("Out")},
        {
            "in_num_col_dims": mul.attr("x_num_col_dims"),
            "activation_type": act.type if act is not None else "",
        },
    )


def fc_fuse(ctx: PassContext) -> int:
    """``mul`` + ``elementwise_add`` (+ relu/sigmoid/tanh) into one ``fc`` op (Fluid's fc_fuse_pass)."""
    return rewrite_all(ctx, lambda op, c: _match_fc(ctx, op, c), lambda f: _fuse_fc(ctx, f))


def _match_conv(ctx: PassContext, op: Any, consumers: dict) -> Any:
    if op.type not in CONV_TYPES or op.attr("data_format") not in ("NCHW", "AnyLayout"):
        return None
    if ctx.param(op.input("Filter")[0]) is None:
        return None
    out = _single_out(op, "Output")
    add = _bias_add(ctx, op, out, consumers, (1,))
    act = _act_after(ctx, add.output("Out")[0] if add is not None else out, consumers)
    if add is None and act is None:
        return None
    return op, add, act


def _fuse_conv(ctx: PassContext, found: tuple) -> None:
    conv, add, act = found
    last = act.output("Out") if act is not None else add.output("Out")
    attrs = {
        k: conv.attr(k) for k in ("strides", "paddings", "dilations", "groups", "padding_algorithm")
    }
    attrs["data_format"] = "NCHW"
    attrs["activation"] = act.type if act is not None else "identity"
    inputs = {"Input": conv.input("Input"), "Filter": conv.input("Filter")}
    if add is not None:
        inputs["Bias"] = add.input("Y")
    ctx.replace_op(
        [x for x in found if x is not None], "conv2d_fusion", inputs, {"Output": last}, attrs
    )


def conv_bias_act_fuse(ctx: PassContext) -> int:
    """conv2d + bias ``elementwise_add`` (+ activation) into ``conv2d_fusion``.

    Fluid's ``conv_elementwise_add_act_fuse_pass``; a conv followed by an
    activation alone (no bias) is fused as well.
    """
    return rewrite_all(ctx, lambda op, c: _match_conv(ctx, op, c), lambda f: _fuse_conv(ctx, f))
