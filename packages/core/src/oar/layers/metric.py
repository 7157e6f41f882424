"""Metric layers: accuracy (and the top-k op it builds on)."""

from __future__ import annotations

from typing import Any

import numpy as np

from oar.errors import ArgumentError, ArgumentTypeError
from oar.layer_helper import LayerHelper, check_variable, is_variable

__all__ = ["accuracy", "topk"]


def topk(input: Any, k: int, name: str | None = None) -> tuple:
    """The ``k`` largest values along the last dim and their indices."""
    helper = LayerHelper("top_k", name=name)
    check_variable("topk", "input", input)
    values = helper.create_variable_for_type_inference(input.dtype)
    indices = helper.create_variable_for_type_inference("int64", stop_gradient=True)
    inputs = {"X": [input]}
    attrs = {}
    if isinstance(k, (int, np.integer)) and not isinstance(k, bool):
        if k < 1:
            raise ArgumentError("topk", f"k must be a positive int, given {k}")
        attrs["k"] = int(k)
    elif not is_variable(k):
        raise ArgumentTypeError(
            "topk", f"k must be an int or a [1] int Variable, given {type(k).__name__} {k!r}"
        )
    else:
        inputs["K"] = [k]
    helper.append_op("top_k", inputs, {"Out": [values], "Indices": [indices]}, attrs)
    indices.stop_gradient = True
    return values, indices


def accuracy(input: Any, label: Any, k: int = 1, correct: Any = None, total: Any = None) -> Any:
    """Fraction of samples whose label is among the top ``k`` predictions."""
    helper = LayerHelper("accuracy")
    check_variable("accuracy", "input", input)
    check_variable("accuracy", "label", label)
    values, indices = topk(input, k)
    acc = helper.create_variable_for_type_inference("float32", stop_gradient=True)
    correct = correct or helper.create_variable_for_type_inference("int32", stop_gradient=True)
    total = total or helper.create_variable_for_type_inference("int32", stop_gradient=True)
    helper.append_op(
        "accuracy",
        {"Out": [values], "Indices": [indices], "Label": [label]},
        {"Accuracy": [acc], "Correct": [correct], "Total": [total]},
    )
    return acc
