"""Recurrent layers over LoD sequences (Fluid 1.8 signatures): dynamic_lstm, dynamic_lstmp,
dynamic_gru."""

from __future__ import annotations

from typing import Any

from oar.framework.dtypes import convert_dtype
from oar.layer_helper import LayerHelper, check_variable
from oar.ops.recurrent import ACTIVATIONS

__all__ = ["dynamic_lstm", "dynamic_lstmp", "dynamic_gru"]


def _check_act(layer: str, arg: str, value: Any) -> str:
    if value not in ACTIVATIONS:
        raise ValueError(f"{layer}: {arg} must be one of {list(ACTIVATIONS)}, given {value!r}")
    return value


def _check_input(layer: str, input: Any, width: int) -> None:
    check_variable(layer, "input", input)
    if len(input.shape) != 2 or input.shape[1] not in (width, -1):
        raise ValueError(
            f"{layer}: input must be [rows, {width}] (project it with fc first), given shape "
            f"{list(input.shape)}"
        )


def dynamic_lstm(
    input: Any,
    size: int,
    h_0: Any = None,
    c_0: Any = None,
    param_attr: Any = None,
    bias_attr: Any = None,
    use_peepholes: bool = True,
    is_reverse: bool = False,
    gate_activation: str = "sigmoid",
    cell_activation: str = "tanh",
    candidate_activation: str = "tanh",
    dtype: str = "float32",
    name: str | None = None,
) -> tuple:
    """An LSTM over every sequence of ``input`` ([rows, size], already projected to the four
    gates); ``size`` is 4 x the hidden size. Returns ``(hidden, cell)``, both [rows, size/4]."""
    if isinstance(size, bool) or not isinstance(size, int) or size <= 0 or size % 4:
        raise ValueError(f"dynamic_lstm: size must be a positive multiple of 4, given {size!r}")
    _check_input("dynamic_lstm", input, size)
    for arg, v in (
        ("gate_activation", gate_activation),
        ("cell_activation", cell_activation),
        ("candidate_activation", candidate_activation),
    ):
        _check_act("dynamic_lstm", arg, v)
    hidden_size = size // 4
    dtype = convert_dtype(dtype)
    helper = LayerHelper("lstm", param_attr=param_attr, bias_attr=bias_attr, name=name)
    w = helper.create_parameter(param_attr, [hidden_size, size], dtype)
    bias_size = [1, 7 * hidden_size if use_peepholes else size]
    b = helper.create_parameter(bias_attr, bias_size, dtype, is_bias=True)
    ins = {"Input": [input], "Weight": [w], "Bias": [b]}
    for slot, arg, v in (("H0", "h_0", h_0), ("C0", "c_0", c_0)):
        if v is not None:
            check_variable("dynamic_lstm", arg, v)
            ins[slot] = [v]
    outs = {s: [helper.create_variable_for_type_inference(dtype)] for s in ("Hidden", "Cell")}
    for s in ("BatchGate", "BatchCellPreAct"):
        outs[s] = [helper.create_variable_for_type_inference(dtype, stop_gradient=True)]
    helper.append_op(
        "lstm",
        ins,
        outs,
        {
            "use_peepholes": bool(use_peepholes),
            "is_reverse": bool(is_reverse),
            "gate_activation": gate_activation,
            "cell_activation": cell_activation,
            "candidate_activation": candidate_activation,
        },
    )
    return outs["Hidden"][0], outs["Cell"][0]


def dynamic_gru(
    input: Any,
    size: int,
    param_attr: Any = None,
    bias_attr: Any = None,
    is_reverse: bool = False,
    gate_activation: str = "sigmoid",
    candidate_activation: str = "tanh",
    h_0: Any = None,
    origin_mode: bool = False,
) -> Any:
    """A GRU over every sequence of ``input`` ([rows, 3 * size], already projected to the
    update, reset and candidate parts). Returns the hidden states [rows, size]."""
    if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
        raise ValueError(f"dynamic_gru: size must be a positive int, given {size!r}")
    _check_input("dynamic_gru", input, 3 * size)
    _check_act("dynamic_gru", "gate_activation", gate_activation)
    _check_act("dynamic_gru", "candidate_activation", candidate_activation)
    helper = LayerHelper("gru", param_attr=param_attr, bias_attr=bias_attr)
    dtype = input.dtype
    w = helper.create_parameter(param_attr, [size, 3 * size], dtype)
    b = helper.create_parameter(bias_attr, [1, 3 * size], dtype, is_bias=True)
    ins = {"Input": [input], "Weight": [w]}
    if b is not None:
        ins["Bias"] = [b]
    if h_0 is not None:
        check_variable("dynamic_gru", "h_0", h_0)
        ins["H0"] = [h_0]
    hidden = helper.create_variable_for_type_inference(dtype)
    outs = {"Hidden": [hidden]}
    for s in ("BatchGate", "BatchResetHiddenPrev", "BatchHidden"):
        outs[s] = [helper.create_variable_for_type_inference(dtype, stop_gradient=True)]
    helper.append_op(
        "gru",
        ins,
        outs,
        {
            "activation": candidate_activation,
            "gate_activation": gate_activation,
            "is_reverse": bool(is_reverse),
            "origin_mode": bool(origin_mode),
        },
    )
    return hidden


def dynamic_lstmp(
    input: Any,
    size: int,
    proj_size: int,
    param_attr: Any = None,
    bias_attr: Any = None,
    use_peepholes: bool = True,
    is_reverse: bool = False,
    gate_activation: str = "sigmoid",
    cell_activation: str = "tanh",
    candidate_activation: str = "tanh",
    proj_activation: str = "tanh",
    dtype: str = "float32",
    name: str | None = None,
    h_0: Any = None,
    c_0: Any = None,
    cell_clip: float | None = None,
    proj_clip: float | None = None,
) -> tuple:
    """An LSTM with a recurrent projection over every sequence of ``input`` ([rows, size],
    projected to the four gates; ``size`` = 4 x hidden): the gates read the previous
    projection ``r = proj_activation(h @ W_proj)`` [rows, proj_size]. ``h_0`` is the initial
    projection [N, proj_size], ``c_0`` the initial cell. Returns ``(projection, cell)``."""
    if isinstance(size, bool) or not isinstance(size, int) or size <= 0 or size % 4:
        raise ValueError(f"dynamic_lstmp: size must be a positive multiple of 4, given {size!r}")
    if isinstance(proj_size, bool) or not isinstance(proj_size, int) or proj_size <= 0:
        raise ValueError(f"dynamic_lstmp: proj_size must be a positive int, given {proj_size!r}")
    _check_input("dynamic_lstmp", input, size)
    acts = {
        "gate_activation": gate_activation,
        "cell_activation": cell_activation,
        "candidate_activation": candidate_activation,
        "proj_activation": proj_activation,
    }
    for arg, v in acts.items():
        _check_act("dynamic_lstmp", arg, v)
    hidden_size = size // 4
    dtype = convert_dtype(dtype)
    helper = LayerHelper("lstmp", param_attr=param_attr, bias_attr=bias_attr, name=name)
    w = helper.create_parameter(param_attr, [proj_size, size], dtype)
    proj_w = helper.create_parameter(param_attr, [hidden_size, proj_size], dtype)
    bias_size = [1, 7 * hidden_size if use_peepholes else size]
    b = helper.create_parameter(bias_attr, bias_size, dtype, is_bias=True)
    ins = {"Input": [input], "Weight": [w], "ProjWeight": [proj_w], "Bias": [b]}
    for slot, arg, v in (("H0", "h_0", h_0), ("C0", "c_0", c_0)):
        if v is not None:
            check_variable("dynamic_lstmp", arg, v)
            ins[slot] = [v]
    outs = {s: [helper.create_variable_for_type_inference(dtype)] for s in ("Projection", "Cell")}
    for s in ("BatchGate", "BatchCellPreAct", "BatchHidden"):
        outs[s] = [helper.create_variable_for_type_inference(dtype, stop_gradient=True)]
    attrs = {
        "use_peepholes": bool(use_peepholes),
        "is_reverse": bool(is_reverse),
        "cell_clip": float(cell_clip or 0.0),
        "proj_clip": float(proj_clip or 0.0),
        **acts,
    }
    helper.append_op("lstmp", ins, outs, attrs)
    return outs["Projection"][0], outs["Cell"][0]
