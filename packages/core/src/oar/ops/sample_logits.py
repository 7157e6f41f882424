"""``sample_logits``: the logits of each row's true classes and of sampled classes, corrected
by ``-log(q)`` (behind ``sampled_softmax_with_cross_entropy``).

Samples [N, num_true + num_samples] are the labels, then ``num_samples`` distinct classes
drawn from the log-uniform distribution and shared by the batch (or CustomizedSamples with
CustomizedProbabilities). With ``remove_accidental_hits`` a sampled class equal to one of
the row's labels gets ``-1e20``. SampledLabels are ``0 .. num_true - 1``.
"""

from __future__ import annotations

from oar.ops._infer import check_float, compatible, meta
from oar.registry import Attr, GradSpec, OpDef


def _infer(ins, attrs):
    lg, lab = ins["Logits"], ins["Labels"]
    check_float(ins, "Logits")
    if len(lg.shape) != 2 or len(lab.shape) != 2 or not compatible(lg.shape[0], lab.shape[0]):
        raise ValueError(
            f"sample_logits: Logits [N, K] and Labels [N, num_true] expected, given {list(lg.shape)} and {list(lab.shape)}"
        )
    if lg.shape[1] >= 0 and attrs["num_samples"] > lg.shape[1]:
        raise ValueError(
            f"sample_logits: num_samples ({attrs['num_samples']}) exceeds the {lg.shape[1]} classes"
        )
    width = lab.shape[1] + attrs["num_samples"] if lab.shape[1] >= 0 else -1
    n = lg.shape[0]
    return {
        "Samples": meta((n, width), "int64"),
        "Probabilities": meta((n, width), lg.dtype),
        "SampledLogits": meta((n, width), lg.dtype),
        "SampledLabels": meta((n, lab.shape[1]), "int64"),
        "LogitsDim": meta(lg.shape, "int64"),
        "LabelsDim": meta(lab.shape, "int64"),
    }


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "sample_logits",
            ["Logits", "Labels", "CustomizedSamples?", "CustomizedProbabilities?"],
            [
                "Samples",
                "Probabilities",
                "SampledLogits",
                "SampledLabels",
                "LogitsDim",
                "LabelsDim",
            ],
            {
                "num_samples": Attr(int, 1),
                "use_customized_samples": Attr(bool, False),
                "uniq": Attr(bool, True),
                "remove_accidental_hits": Attr(bool, True),
                "seed": Attr(int, 0),
            },
            infer_shape=_infer,
            kernel_dtype="Logits",
            grad=GradSpec(("Logits", "Samples", "SampledLogits@GRAD"), ("Logits@GRAD",)),
        )
    )
