"""``fluid.contrib.model_stat.summary``: parameters and FLOPs of a program's layers."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["summary"]


def _shape(block: Any, name: str) -> list:
    var = block._find_var_recursive(name)
    return list(var.shape) if var is not None else []


def _numel(shape: list) -> int:
    return int(np.prod([max(d, 1) for d in shape])) if shape else 0


def _op_stat(block: Any, op: Any) -> tuple | None:
    """``(input shape, output shape, params, flops)`` per sample, or None for ops not counted."""
    if op.type in ("conv2d", "depthwise_conv2d"):
        x = _shape(block, op.input("Input")[0])
        w = _shape(block, op.input("Filter")[0])
        out = _shape(block, op.output("Output")[0])
        c_out, c_in_g, kh, kw = w
        params = _numel(w) + (c_out if op.input("Bias") else 0)
        flops = 2 * c_in_g * kh * kw * _numel(out[1:])
        return x, out, params, flops
    if op.type == "pool2d":
        x, out = _shape(block, op.input("X")[0]), _shape(block, op.output("Out")[0])
        k = op.attr("ksize") or [1, 1]
        return x, out, 0, _numel(out[1:]) * int(np.prod(k))
    if op.type in ("mul", "matmul"):
        x, y = _shape(block, op.input("X")[0]), _shape(block, op.input("Y")[0])
        out = _shape(block, op.output("Out")[0])
        is_param = block._find_var_recursive(op.input("Y")[0]).persistable
        return x, out, (_numel(y) if is_param else 0), 2 * _numel(y)
    if op.type in ("batch_norm", "layer_norm"):
        x = _shape(block, op.input("X")[0])
        scale = op.input("Scale")
        params = 2 * _numel(_shape(block, scale[0])) if scale else 0
        return x, x, params, 2 * _numel(x[1:])
    if op.type in ("relu", "sigmoid", "tanh", "softmax", "elementwise_add"):
        x = _shape(block, op.input("X")[0])
        return x, _shape(block, op.output("Out")[0]), 0, _numel(x[1:])
    return None


def summary(main_prog: Any) -> tuple:
    """Print one row per counted op (conv, pool, fc/mul, norms, activations) and the totals.

    Returns ``(total params, total FLOPs per sample)``.
    """
    rows = []
    for block in main_prog.blocks:
        for op in block.ops:
            if op.type.endswith("_grad"):
                continue
            stat = _op_stat(block, op)
            if stat is not None:
                rows.append((op.type, *stat))
    header = f"{'No.':<5}{'TYPE':<18}{'INPUT':<22}{'OUTPUT':<22}{'PARAMs':<12}FLOPs"
    line = "+" + "-" * (len(header) + 4) + "+"
    print(line)
    print(header)
    print(line)
    for i, (kind, x, out, params, flops) in enumerate(rows):
        print(f"{i:<5}{kind:<18}{str(x):<22}{str(out):<22}{params:<12}{flops}")
    total_params = sum(r[3] for r in rows)
    total_flops = sum(r[4] for r in rows)
    print(line)
    print(f"Total PARAMs: {total_params}({total_params / 1e6:.4f}M)")
    print(f"Total FLOPs: {total_flops}({total_flops / 1e9:.2f}G)")
    return total_params, total_flops
