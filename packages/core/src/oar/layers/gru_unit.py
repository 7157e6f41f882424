"""gru_unit (Fluid 1.8 signature): one GRU step on a pre-projected input."""

from __future__ import annotations

from typing import Any

from oar.layer_helper import LayerHelper, check_variable
from oar.ops.gru_unit import ACTIVATIONS

__all__ = ["gru_unit"]


def gru_unit(
    input: Any,
    hidden: Any,
    size: int,
    param_attr: Any = None,
    bias_attr: Any = None,
    activation: str = "tanh",
    gate_activation: str = "sigmoid",
    origin_mode: bool = False,
) -> tuple:
    """One GRU step: ``input`` [N, size] (projected to the update, reset and candidate parts,
    ``size`` = 3 x hidden width), ``hidden`` [N, size / 3]. Returns ``(updated_hidden,
    reset_hidden_pre, gate)``; the weight [D, 3D] is Fluid's (gate weights then candidate
    weights in memory order)."""
    check_variable("gru_unit", "input", input)
    check_variable("gru_unit", "hidden", hidden)
    if isinstance(size, bool) or not isinstance(size, int) or size <= 0 or size % 3:
        raise ValueError(f"gru_unit: size must be a positive multiple of 3, given {size!r}")
    for arg, v in (("activation", activation), ("gate_activation", gate_activation)):
        if v not in ACTIVATIONS:
            raise ValueError(f"gru_unit: {arg} must be one of {list(ACTIVATIONS)}, given {v!r}")
    d = size // 3
    helper = LayerHelper("gru_unit", param_attr=param_attr, bias_attr=bias_attr)
    dtype = input.dtype
    w = helper.create_parameter(param_attr, [d, 3 * d], dtype)
    b = helper.create_parameter(bias_attr, [1, 3 * d], dtype, is_bias=True)
    ins = {"Input": [input], "HiddenPrev": [hidden], "Weight": [w]}
    if b is not None:
        ins["Bias"] = [b]
    gate = helper.create_variable_for_type_inference(dtype)
    reset = helper.create_variable_for_type_inference(dtype)
    out = helper.create_variable_for_type_inference(dtype)
    helper.append_op(
        "gru_unit",
        ins,
        {"Gate": [gate], "ResetHiddenPrev": [reset], "Hidden": [out]},
        {
            "activation": ACTIVATIONS[activation],
            "gate_activation": ACTIVATIONS[gate_activation],
            "origin_mode": bool(origin_mode),
        },
    )
    return out, reset, gate
