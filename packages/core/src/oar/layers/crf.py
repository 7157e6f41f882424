"""Linear-chain CRF layers (Fluid 1.8 signatures): linear_chain_crf and crf_decoding."""

from __future__ import annotations

from typing import Any

from oar.layer_helper import LayerHelper, check_variable

__all__ = ["linear_chain_crf", "crf_decoding"]


def _inputs(layer: str, input: Any, length: Any) -> dict:
    check_variable(layer, "input", input)
    ins = {"Emission": [input]}
    if length is not None:
        check_variable(layer, "length", length)
        ins["Length"] = [length]
    if input.shape[-1] < 0:
        raise ValueError(
            f"{layer}: the tag count (input's last dim) must be known, given {list(input.shape)}"
        )
    return ins


def linear_chain_crf(input: Any, label: Any, param_attr: Any = None, length: Any = None) -> Any:
    """The negative log-likelihood [num_sequences, 1] of each ``label`` path given the
    emission scores ``input`` ([rows, num_tags] LoD, or [B, L, num_tags] with ``length``).
    The transition parameter is [num_tags + 2, num_tags] (start, end, transitions)."""
    ins = _inputs("linear_chain_crf", input, length)
    check_variable("linear_chain_crf", "label", label)
    ins["Label"] = [label]
    size = input.shape[-1]
    helper = LayerHelper("linear_chain_crf", param_attr=param_attr)
    transition = helper.create_parameter(param_attr, [size + 2, size], input.dtype)
    ins["Transition"] = [transition]
    outs = {
        s: [helper.create_variable_for_type_inference(input.dtype, stop_gradient=True)]
        for s in ("Alpha", "EmissionExps", "TransitionExps")
    }
    nll = helper.create_variable_for_type_inference(input.dtype)
    outs["LogLikelihood"] = [nll]
    helper.append_op("linear_chain_crf", ins, outs)
    return nll


def crf_decoding(input: Any, param_attr: Any, label: Any = None, length: Any = None) -> Any:
    """The best tag path of every sequence (Viterbi) under the transition parameter named by
    ``param_attr`` (share it with ``linear_chain_crf``); with ``label``, 1 where the path
    equals the label and 0 elsewhere."""
    ins = _inputs("crf_decoding", input, length)
    size = input.shape[-1]
    helper = LayerHelper("crf_decoding", param_attr=param_attr)
    ins["Transition"] = [helper.create_parameter(param_attr, [size + 2, size], input.dtype)]
    if label is not None:
        check_variable("crf_decoding", "label", label)
        ins["Label"] = [label]
    path = helper.create_variable_for_type_inference("int64", stop_gradient=True)
    helper.append_op("crf_decoding", ins, {"ViterbiPath": [path]})
    return path
