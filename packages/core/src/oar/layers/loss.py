"""Loss layers: cross_entropy and square_error_cost."""

from __future__ import annotations

from typing import Any

from oar.layer_helper import LayerHelper, check_variable

__all__ = ["cross_entropy", "square_error_cost"]


def cross_entropy(
    input: Any, label: Any, soft_label: bool = False, ignore_index: int = -100
) -> Any:
    """-log(input[label]) per sample; ``input`` holds probabilities (e.g. a softmax)."""
    helper = LayerHelper("cross_entropy")
    check_variable("cross_entropy", "input", input)
    check_variable("cross_entropy", "label", label)
    out = helper.create_variable_for_type_inference(input.dtype)
    helper.append_op(
        "cross_entropy",
        {"X": [input], "Label": [label]},
        {"Y": [out]},
        {"soft_label": soft_label, "ignore_index": ignore_index},
    )
    return out


def square_error_cost(input: Any, label: Any) -> Any:
    """(input - label)^2, elementwise."""
    helper = LayerHelper("square_error_cost")
    check_variable("square_error_cost", "input", input)
    check_variable("square_error_cost", "label", label)
    minus = helper.create_variable_for_type_inference(input.dtype)
    helper.append_op("elementwise_sub", {"X": [input], "Y": [label]}, {"Out": [minus]})
    out = helper.create_variable_for_type_inference(input.dtype)
    helper.append_op("square", {"X": [minus]}, {"Out": [out]})
    return out
