"""chunk_eval (Fluid 1.8 signature)."""

from __future__ import annotations

from typing import Any

from oar.layer_helper import LayerHelper, check_variable
from oar.ops.chunk_eval import SCHEMES

__all__ = ["chunk_eval"]


def chunk_eval(
    input: Any,
    label: Any,
    chunk_scheme: str,
    num_chunk_types: int,
    excluded_chunk_types: Any = None,
    seq_length: Any = None,
) -> tuple:
    """Chunk-level scores of predicted tags ``input`` against ``label`` (tag = chunk type *
    tags per type + position; ``num_chunk_types`` * tags per type is "outside"). Returns
    ``(precision, recall, f1_score, num_infer_chunks, num_label_chunks, num_correct_chunks)``."""
    check_variable("chunk_eval", "input", input)
    check_variable("chunk_eval", "label", label)
    if chunk_scheme not in SCHEMES:
        raise ValueError(
            f"chunk_eval: chunk_scheme must be one of {list(SCHEMES)}, given {chunk_scheme!r}"
        )
    if (
        isinstance(num_chunk_types, bool)
        or not isinstance(num_chunk_types, int)
        or num_chunk_types <= 0
    ):
        raise ValueError(
            f"chunk_eval: num_chunk_types must be a positive int, given {num_chunk_types!r}"
        )
    ins = {"Inference": [input], "Label": [label]}
    if seq_length is not None:
        check_variable("chunk_eval", "seq_length", seq_length)
        ins["SeqLength"] = [seq_length]
    helper = LayerHelper("chunk_eval")
    slots = (
        "Precision",
        "Recall",
        "F1-Score",
        "NumInferChunks",
        "NumLabelChunks",
        "NumCorrectChunks",
    )
    dtypes = ("float32",) * 3 + ("int64",) * 3
    outs = {
        s: [helper.create_variable_for_type_inference(d, stop_gradient=True)]
        for s, d in zip(slots, dtypes)
    }
    helper.append_op(
        "chunk_eval",
        ins,
        outs,
        {
            "num_chunk_types": num_chunk_types,
            "chunk_scheme": chunk_scheme,
            "excluded_chunk_types": list(excluded_chunk_types or []),
        },
    )
    return tuple(outs[s][0] for s in slots)
