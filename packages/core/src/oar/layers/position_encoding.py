"""add_position_encoding (Fluid 1.8 signature)."""

from __future__ import annotations

from typing import Any

from oar.layer_helper import LayerHelper, check_variable

__all__ = ["add_position_encoding"]


def add_position_encoding(input: Any, alpha: float, beta: float, name: str | None = None) -> Any:
    """``alpha * input + beta * PE`` for [batch, seq_len, channels] input, PE the Transformer's
    sinusoid encoding of each position."""
    check_variable("add_position_encoding", "input", input)
    helper = LayerHelper("add_position_encoding", name=name)
    out = helper.create_variable_for_type_inference(input.dtype)
    helper.append_op(
        "add_position_encoding",
        {"X": [input]},
        {"Out": [out]},
        {"alpha": float(alpha), "beta": float(beta)},
    )
    return out
