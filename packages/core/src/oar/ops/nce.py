"""``nce``: noise-contrastive estimation. Per row, the ``num_true`` labels and
``num_neg_samples`` sampled classes (uniform, log-uniform or a custom distribution q, drawn
with replacement, so any count is allowed and a row may draw its own label) get
``o = sigmoid(w_k . x + b_k)``; with ``b = q(k) * num_neg_samples`` the cost is the mean over
the samples of ``-log(o / (o + b))`` (true) and ``-log(b / (o + b))`` (sampled), times the
row's SampleWeight. ``custom_neg_classes`` fixes the sampled classes (for tests), as in Fluid.
"""

from __future__ import annotations

from oar.ops._infer import check_float, compatible, meta
from oar.registry import Attr, GradSpec, OpDef


def _infer(ins, attrs):
    x, lab, w = ins["Input"], ins["Label"], ins["Weight"]
    check_float(ins, "Input")
    if len(x.shape) != 2 or len(w.shape) != 2 or not compatible(x.shape[1], w.shape[1]):
        raise ValueError(
            f"nce: Input [N, D] and Weight [classes, D] expected, given {list(x.shape)} and {list(w.shape)}"
        )
    if len(lab.shape) != 2 or not compatible(lab.shape[0], x.shape[0]):
        raise ValueError(f"nce: Label must be [N, num_true], given {list(lab.shape)}")
    if attrs["num_neg_samples"] < 0 or attrs["num_total_classes"] < 1:
        raise ValueError(
            f"nce: num_neg_samples >= 0 and num_total_classes >= 1 expected, given "
            f"{attrs['num_neg_samples']} and {attrs['num_total_classes']}"
        )
    width = lab.shape[1] + attrs["num_neg_samples"] if lab.shape[1] >= 0 else -1
    return {
        "Cost": meta((x.shape[0], 1), x.dtype),
        "SampleLogits": meta((x.shape[0], width), x.dtype),
        "SampleLabels": meta((x.shape[0], width), "int64"),
    }


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "nce",
            [
                "Input",
                "Label",
                "Weight",
                "Bias?",
                "SampleWeight?",
                "CustomDistProbs?",
                "CustomDistAlias?",
                "CustomDistAliasProbs?",
            ],
            ["Cost", "SampleLogits", "SampleLabels"],
            {
                "num_total_classes": Attr(int, 2),
                "num_neg_samples": Attr(int, 10),
                "sampler": Attr(int, 0),
                "seed": Attr(int, 0),
                "is_sparse": Attr(bool, False),
                "remote_prefetch": Attr(bool, False),
                "custom_neg_classes": Attr(list, []),
            },
            infer_shape=_infer,
            kernel_dtype="Input",
            grad=GradSpec(
                (
                    "Input",
                    "Label",
                    "Weight",
                    "Bias",
                    "SampleWeight",
                    "CustomDistProbs",
                    "SampleLogits",
                    "SampleLabels",
                    "Cost@GRAD",
                ),
                ("Input@GRAD", "Weight@GRAD", "Bias@GRAD"),
            ),
        )
    )
