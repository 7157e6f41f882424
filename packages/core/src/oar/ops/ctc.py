"""Connectionist temporal classification: warpctc (the CTC loss on unnormalised logits, its
softmax inside, as Baidu's warp-ctc that Fluid wraps) and ctc_align (merge repeats, drop
blanks: the tail of ctc_greedy_decoder)."""

from __future__ import annotations

from oar.ops._infer import check_float, meta
from oar.registry import Attr, GradSpec, OpDef

_INTS = ("int32", "int64")


def _infer_warpctc(ins, attrs):
    x, label = ins["Logits"], ins["Label"]
    check_float(ins, "Logits")
    if label.dtype not in _INTS:
        raise TypeError(f"Label must be int32 (or int64), given {label.dtype}")
    classes = x.shape[-1]
    if attrs["blank"] < 0 or (classes >= 0 and attrs["blank"] >= classes):
        raise ValueError(f"blank {attrs['blank']} must be a class index in [0, {classes})")
    return {"Loss": meta((-1, 1), x.dtype), "WarpCTCGrad": meta(x.shape, x.dtype)}


def _infer_align(ins, attrs):
    x = ins["Input"]
    if x.dtype not in _INTS:
        raise TypeError(f"Input must hold int class ids, given {x.dtype}")
    return {"Output": meta((-1, 1), x.dtype, max(x.lod_level, 1))}


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "warpctc",
            ["Logits", "Label", "LogitsLength?", "LabelLength?"],
            ["WarpCTCGrad", "Loss"],
            {"blank": Attr(int, 0), "norm_by_times": Attr(bool, False)},
            infer_shape=_infer_warpctc,
            kernel_dtype="Logits",
            grad=GradSpec(("Loss@GRAD", "WarpCTCGrad", "Logits", "LogitsLength"), ("Logits@GRAD",)),
            doc="CTC loss -log p(Label | Logits) of every sequence",
        )
    )
    registry.register_op(
        OpDef(
            "ctc_align",
            ["Input", "InputLength?"],
            ["Output", "OutputLength?"],
            {
                "blank": Attr(int, 0),
                "merge_repeated": Attr(bool, True),
                "padding_value": Attr(int, 0),
            },
            infer_shape=_infer_align,
            doc="merge repeated ids and remove blanks in every sequence",
        )
    )
