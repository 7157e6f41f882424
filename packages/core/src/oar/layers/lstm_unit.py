"""lstm_unit (Fluid 1.8 signature): one LSTM step with its own fc projection."""

from __future__ import annotations

from typing import Any

from oar.layer_helper import LayerHelper, check_variable
from oar.layers.fc import fc
from oar.layers.manip import concat

__all__ = ["lstm_unit"]


def lstm_unit(
    x_t: Any,
    hidden_t_prev: Any,
    cell_t_prev: Any,
    forget_bias: float = 0.0,
    param_attr: Any = None,
    bias_attr: Any = None,
    name: str | None = None,
) -> tuple:
    """One LSTM step: ``fc(concat(x_t, hidden_t_prev))`` gives the gates [i, f, o, j];
    returns ``(hidden, cell)``."""
    for arg, v in (("x_t", x_t), ("hidden_t_prev", hidden_t_prev), ("cell_t_prev", cell_t_prev)):
        check_variable("lstm_unit", arg, v)
        if len(v.shape) != 2:
            raise ValueError(f"lstm_unit: {arg} must be 2-D [batch, width], given {list(v.shape)}")
    size = cell_t_prev.shape[1]
    if hidden_t_prev.shape[1] != size:
        raise ValueError(
            f"lstm_unit: hidden_t_prev width {hidden_t_prev.shape[1]} must equal cell_t_prev's {size}"
        )
    gates = fc(
        concat([x_t, hidden_t_prev], axis=1),
        size=4 * size,
        param_attr=param_attr,
        bias_attr=bias_attr,
    )
    helper = LayerHelper("lstm_unit", name=name)
    c = helper.create_variable_for_type_inference(x_t.dtype)
    h = helper.create_variable_for_type_inference(x_t.dtype)
    helper.append_op(
        "lstm_unit",
        {"X": [gates], "C_prev": [cell_t_prev]},
        {"C": [c], "H": [h]},
        {"forget_bias": float(forget_bias)},
    )
    return h, c
