"""chunk_eval: precision, recall and F1 of the chunks (named entities, phrases) in tagged
sequences, for the IOB, IOE, IOBES and plain tagging schemes."""

from __future__ import annotations

from oar.ops._infer import meta
from oar.registry import Attr, OpDef

SCHEMES = ("IOB", "IOE", "IOBES", "plain")
_INTS = ("int32", "int64")


def _infer(ins, attrs):
    for slot in ("Inference", "Label"):
        if ins[slot].dtype not in _INTS:
            raise TypeError(f"{slot} must hold int64 tags, given {ins[slot].dtype}")
    score = meta((1,), "float32")
    count = meta((1,), "int64")
    return {
        "Precision": score,
        "Recall": score,
        "F1-Score": score,
        "NumInferChunks": count,
        "NumLabelChunks": count,
        "NumCorrectChunks": count,
    }


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "chunk_eval",
            ["Inference", "Label", "SeqLength?"],
            [
                "Precision",
                "Recall",
                "F1-Score",
                "NumInferChunks",
                "NumLabelChunks",
                "NumCorrectChunks",
            ],
            {
                "num_chunk_types": Attr(int, check=lambda v: None if v > 0 else "must be > 0"),
                "chunk_scheme": Attr(
                    str, "IOB", lambda v: None if v in SCHEMES else f"must be one of {SCHEMES}"
                ),
                "excluded_chunk_types": Attr(list, []),
            },
            infer_shape=_infer,
            kernel_dtype="Inference",
            doc="chunk-level precision / recall / F1 of tagged sequences",
        )
    )
