"""Convolutions along sequences: sequence_conv (a context window of rows, then a GEMM) and
row_conv (lookahead convolution, DeepSpeech 2). Windows never cross a sequence boundary:
rows outside the sequence count as zeros."""

from __future__ import annotations

from oar.ops._infer import check_float, check_same_dtype, meta
from oar.registry import Attr, GradSpec, OpDef


def _stride_one(v):
    return None if v == 1 else "only 1 is supported (as in Fluid)"


def _no_trainable_padding(v):
    return None if v is False else "trainable padding (PaddingData) is not supported"


def _infer_seq_conv(ins, attrs):
    x, w = ins["X"], ins["Filter"]
    check_float(ins, "X")
    check_same_dtype(ins, "X", "Filter")
    if len(x.shape) != 2 or len(w.shape) != 2:
        raise ValueError(
            f"X must be [rows, width] and Filter 2-D, given X {list(x.shape)}, Filter {list(w.shape)}"
        )
    width = x.shape[1]
    if width >= 0 and w.shape[0] != attrs["contextLength"] * width:
        raise ValueError(
            f"Filter must have contextLength * width = {attrs['contextLength']} * {width} rows, "
            f"given {w.shape[0]}"
        )
    return {"Out": meta((-1, w.shape[1]), x.dtype, max(x.lod_level, 1))}


def _infer_row_conv(ins, attrs):
    x, w = ins["X"], ins["Filter"]
    check_float(ins, "X")
    check_same_dtype(ins, "X", "Filter")
    if len(w.shape) != 2 or (x.shape[-1] >= 0 and w.shape[1] != x.shape[-1]):
        raise ValueError(
            f"Filter must be [future_context_size + 1, {x.shape[-1]}], given {list(w.shape)}"
        )
    return {"Out": x}


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "sequence_conv",
            ["X", "PaddingData?", "Filter"],
            ["Out"],
            {
                "contextLength": Attr(int, check=lambda v: None if v > 0 else "must be > 0"),
                "contextStart": Attr(int, 0),
                "contextStride": Attr(int, 1, _stride_one),
                "paddingTrainable": Attr(bool, False, _no_trainable_padding),
            },
            infer_shape=_infer_seq_conv,
            kernel_dtype="X",
            grad=GradSpec(("Out@GRAD", "X", "Filter"), ("X@GRAD", "Filter@GRAD")),
            doc="context projection of each row's window inside its sequence, times Filter",
        )
    )
    registry.register_op(
        OpDef(
            "row_conv",
            ["X", "Filter"],
            ["Out"],
            infer_shape=_infer_row_conv,
            kernel_dtype="X",
            grad=GradSpec(("Out@GRAD", "X", "Filter"), ("X@GRAD", "Filter@GRAD")),
            share_lod=(("X", "Out"),),
            doc="out[t] = sum_k Filter[k] * x[t + k] inside each sequence (lookahead)",
        )
    )
