"""CTC layers (Fluid 1.8 signatures): warpctc (the loss) and ctc_greedy_decoder."""

from __future__ import annotations

from typing import Any

from oar.layer_helper import LayerHelper, check_variable
from oar.layers.metric import topk

__all__ = ["warpctc", "ctc_greedy_decoder"]


def warpctc(
    input: Any,
    label: Any,
    blank: int = 0,
    norm_by_times: bool = False,
    input_length: Any = None,
    label_length: Any = None,
) -> Any:
    """The CTC loss [num_sequences, 1] of ``label`` given the unnormalised ``input`` logits
    ([rows, num_classes + 1] LoD, or [T, B, num_classes + 1] with ``input_length`` and
    ``label_length``); ``norm_by_times`` divides the gradient by each sequence's length."""
    check_variable("warpctc", "input", input)
    check_variable("warpctc", "label", label)
    ins = {"Logits": [input], "Label": [label]}
    if (input_length is None) != (label_length is None):
        raise ValueError("warpctc: give both input_length and label_length, or neither")
    if input_length is not None:
        check_variable("warpctc", "input_length", input_length)
        check_variable("warpctc", "label_length", label_length)
        ins["LogitsLength"], ins["LabelLength"] = [input_length], [label_length]
    helper = LayerHelper("warpctc")
    loss = helper.create_variable_for_type_inference(input.dtype)
    grad = helper.create_variable_for_type_inference(input.dtype, stop_gradient=True)
    helper.append_op(
        "warpctc",
        ins,
        {"Loss": [loss], "WarpCTCGrad": [grad]},
        {"blank": int(blank), "norm_by_times": bool(norm_by_times)},
    )
    return loss


def ctc_greedy_decoder(
    input: Any,
    blank: int,
    input_length: Any = None,
    padding_value: int = 0,
    name: str | None = None,
) -> Any:
    """Best path decoding: the arg max class of every step, repeats merged, blanks removed.
    LoD input gives a LoD output; padded [B, T, C] input with ``input_length`` gives
    ``(output [B, T] padded with padding_value, output_length [B, 1])``."""
    check_variable("ctc_greedy_decoder", "input", input)
    _, ids = topk(input, k=1)
    helper = LayerHelper("ctc_greedy_decoder", name=name)
    out = helper.create_variable_for_type_inference("int64", stop_gradient=True)
    attrs = {"blank": int(blank), "merge_repeated": True, "padding_value": int(padding_value)}
    if input_length is None:
        helper.append_op("ctc_align", {"Input": [ids]}, {"Output": [out]}, attrs)
        return out
    check_variable("ctc_greedy_decoder", "input_length", input_length)
    length = helper.create_variable_for_type_inference("int64", stop_gradient=True)
    helper.append_op(
        "ctc_align",
        {"Input": [ids], "InputLength": [input_length]},
        {"Output": [out], "OutputLength": [length]},
        attrs,
    )
    return out, length
