"""fluid.layers.nce: noise-contrastive estimation loss."""

from __future__ import annotations

import numpy as np

from oar.errors import ArgumentError
from oar.layer_helper import LayerHelper, check_variable

__all__ = ["nce"]

_SAMPLERS = {"uniform": 0, "log_uniform": 1, "custom_dist": 2}


def _neg_samples(where: str, num_neg_samples) -> int:
    """The number of negatives (default 10). They are drawn with replacement, so, as in
    Fluid 1.8.5, it may reach or pass num_total_classes; 0 gives a zero cost."""
    s = 10 if num_neg_samples is None else num_neg_samples
    if isinstance(s, bool) or not isinstance(s, int) or s < 0:
        raise ArgumentError(where, f"num_neg_samples must be an int >= 0, given {s!r}")
    return s


def nce(
    input,
    label,
    num_total_classes,
    sample_weight=None,
    param_attr=None,
    bias_attr=None,
    num_neg_samples=None,
    name=None,
    sampler="uniform",
    custom_dist=None,
    seed=0,
    is_sparse=False,
):
    """[N, 1] NCE cost of ``label`` against ``num_neg_samples`` (default 10) classes sampled
    with replacement;
    W [num_total_classes, D], bias [num_total_classes, 1]."""
    from oar.layers.tensor import assign

    check_variable("nce", "input", input)
    check_variable("nce", "label", label)
    if (
        isinstance(num_total_classes, bool)
        or not isinstance(num_total_classes, int)
        or num_total_classes < 1
    ):
        raise ArgumentError(
            "nce", f"num_total_classes must be a positive int, given {num_total_classes!r}"
        )
    s = _neg_samples("nce", num_neg_samples)
    if sampler not in _SAMPLERS:
        raise ArgumentError("nce", f"sampler must be one of {list(_SAMPLERS)}, given {sampler!r}")
    if len(input.shape) != 2 or input.shape[1] < 0:
        raise ArgumentError(
            "nce", f"input must be [N, D] with a known D, given {list(input.shape)}"
        )
    helper = LayerHelper("nce", name=name)
    dtype = str(input.dtype)
    w = helper.create_parameter(param_attr, [num_total_classes, input.shape[1]], dtype)
    ins = {"Input": [input], "Label": [label], "Weight": [w]}
    b = helper.create_parameter(bias_attr, [num_total_classes, 1], dtype, is_bias=True)
    if b is not None:
        ins["Bias"] = [b]
    if sample_weight is not None:
        check_variable("nce", "sample_weight", sample_weight)
        ins["SampleWeight"] = [sample_weight]
    if sampler == "custom_dist":
        probs = (
            np.asarray(custom_dist, dtype="float32").reshape(-1)
            if custom_dist is not None
            else None
        )
        if probs is None or probs.size != num_total_classes or (probs < 0).any():
            raise ArgumentError(
                "nce", f"custom_dist must give {num_total_classes} non-negative probabilities"
            )
        ins["CustomDistProbs"] = [assign(probs)]
    cost = helper.create_variable_for_type_inference(dtype)
    logits = helper.create_variable_for_type_inference(dtype, stop_gradient=True)
    labels = helper.create_variable_for_type_inference("int64", stop_gradient=True)
    helper.append_op(
        "nce",
        ins,
        {"Cost": [cost], "SampleLogits": [logits], "SampleLabels": [labels]},
        {
            "num_total_classes": num_total_classes,
            "num_neg_samples": s,
            "sampler": _SAMPLERS[sampler],
            "seed": int(seed),
            "is_sparse": bool(is_sparse),
        },
    )
    return cost
