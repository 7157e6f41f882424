"""Linear-chain CRF: linear_chain_crf (negative log-likelihood of the label path) and
crf_decoding (Viterbi). The Transition parameter is Fluid's [D + 2, D]: row 0 the start
weights, row 1 the end weights, rows 2.. the tag-to-tag transitions. Sequences are LoD
sequences of Emission, or rows of a padded [B, L, D] Emission with a Length tensor."""

from __future__ import annotations

from oar.ops._infer import check_float, check_same_dtype, meta
from oar.registry import GradSpec, OpDef

_INTS = ("int32", "int64")


def _check(ins) -> int:
    x, w = ins["Emission"], ins["Transition"]
    check_float(ins, "Emission")
    check_same_dtype(ins, "Emission", "Transition")
    d = x.shape[-1]
    if len(w.shape) != 2 or (d >= 0 and tuple(w.shape) != (d + 2, d)):
        raise ValueError(f"Transition must be [D + 2, D] = [{d + 2}, {d}], given {list(w.shape)}")
    if ins.get("Length") is not None and len(x.shape) != 3:
        raise ValueError(f"with Length, Emission must be padded [B, L, D], given {list(x.shape)}")
    if ins.get("Length") is None and len(x.shape) != 2:
        raise ValueError(f"Emission must be a [rows, D] LoDTensor, given {list(x.shape)}")
    return d


def _infer_crf(ins, attrs):
    d = _check(ins)
    if ins["Label"].dtype not in _INTS:
        raise TypeError(f"Label must be int64, given {ins['Label'].dtype}")
    x = ins["Emission"]
    return {
        "Alpha": meta(x.shape, x.dtype),
        "EmissionExps": meta(x.shape, x.dtype),
        "TransitionExps": meta((d + 2, d), x.dtype),
        "LogLikelihood": meta((-1, 1), x.dtype),
    }


def _infer_decoding(ins, attrs):
    _check(ins)
    x = ins["Emission"]
    shape = (-1, 1) if ins.get("Length") is None else tuple(x.shape[:2])
    return {"ViterbiPath": meta(shape, "int64", x.lod_level)}


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "linear_chain_crf",
            ["Emission", "Transition", "Label", "Length?"],
            ["Alpha", "EmissionExps", "TransitionExps", "LogLikelihood"],
            infer_shape=_infer_crf,
            kernel_dtype="Emission",
            grad=GradSpec(
                ("LogLikelihood@GRAD", "Emission", "Transition", "Label", "Length"),
                ("Emission@GRAD", "Transition@GRAD"),
            ),
            doc="negative log-likelihood of each label sequence under a linear-chain CRF",
        )
    )
    registry.register_op(
        OpDef(
            "crf_decoding",
            ["Emission", "Transition", "Label?", "Length?"],
            ["ViterbiPath"],
            infer_shape=_infer_decoding,
            kernel_dtype="Emission",
            doc="the best tag path (Viterbi); with Label, 1 where the path equals the label",
        )
    )
