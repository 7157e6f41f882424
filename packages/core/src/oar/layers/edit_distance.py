"""edit_distance (Fluid 1.8 signature), with sequence_erase for ignored tokens."""

from __future__ import annotations

from typing import Any

from oar.layer_helper import LayerHelper, check_variable

__all__ = ["edit_distance"]


def _erase(x: Any, tokens: list) -> Any:
    helper = LayerHelper("sequence_erase")
    out = helper.create_variable_for_type_inference(x.dtype, stop_gradient=True)
    helper.append_op("sequence_erase", {"X": [x]}, {"Out": [out]}, {"tokens": list(tokens)})
    return out


def edit_distance(
    input: Any,
    label: Any,
    normalized: bool = True,
    ignored_tokens: Any = None,
    input_length: Any = None,
    label_length: Any = None,
) -> tuple:
    """Levenshtein distance of every hypothesis sequence (``input``) to its reference
    (``label``), divided by the reference's length when ``normalized``; ``ignored_tokens``
    are removed first. Returns ``(distance [num_sequences, 1], sequence_num [1])``."""
    check_variable("edit_distance", "input", input)
    check_variable("edit_distance", "label", label)
    if ignored_tokens:
        input, label = _erase(input, ignored_tokens), _erase(label, ignored_tokens)
    ins = {"Hyps": [input], "Refs": [label]}
    if (input_length is None) != (label_length is None):
        raise ValueError("edit_distance: give both input_length and label_length, or neither")
    if input_length is not None:
        ins["HypsLength"], ins["RefsLength"] = [input_length], [label_length]
    helper = LayerHelper("edit_distance")
    out = helper.create_variable_for_type_inference("float32", stop_gradient=True)
    num = helper.create_variable_for_type_inference("int64", stop_gradient=True)
    helper.append_op(
        "edit_distance", ins, {"Out": [out], "SequenceNum": [num]}, {"normalized": bool(normalized)}
    )
    return out, num
