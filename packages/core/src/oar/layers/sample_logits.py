"""fluid.layers.sampled_softmax_with_cross_entropy (Jean et al. 2015)."""

from __future__ import annotations

from oar.errors import ArgumentError
from oar.layer_helper import LayerHelper, check_variable

__all__ = ["sampled_softmax_with_cross_entropy"]


def sampled_softmax_with_cross_entropy(
    logits,
    label,
    num_samples,
    num_true=1,
    remove_accidental_hits=True,
    use_customized_samples=False,
    customized_samples=None,
    customized_probabilities=None,
    seed=0,
):
    """[N, 1] softmax cross-entropy over each row's ``num_true`` labels and ``num_samples``
    sampled classes (log-uniform, shared by the batch), the logits corrected by ``-log(q)``."""
    from oar.layers.losses import softmax_with_cross_entropy
    from oar.layers.math import scale

    check_variable("sampled_softmax_with_cross_entropy", "logits", logits)
    check_variable("sampled_softmax_with_cross_entropy", "label", label)
    if isinstance(num_samples, bool) or not isinstance(num_samples, int) or num_samples < 1:
        raise ArgumentError(
            "sampled_softmax_with_cross_entropy",
            f"num_samples must be a positive int, given {num_samples!r}",
        )
    if isinstance(num_true, bool) or not isinstance(num_true, int) or num_true < 1:
        raise ArgumentError(
            "sampled_softmax_with_cross_entropy",
            f"num_true must be a positive int, given {num_true!r}",
        )
    helper = LayerHelper("sample_logits")
    ins = {"Logits": [logits], "Labels": [label]}
    if use_customized_samples:
        if customized_samples is None or customized_probabilities is None:
            raise ArgumentError(
                "sampled_softmax_with_cross_entropy",
                "use_customized_samples needs customized_samples and customized_probabilities",
            )
        ins["CustomizedSamples"] = [customized_samples]
        ins["CustomizedProbabilities"] = [customized_probabilities]
    outs = {
        name: [helper.create_variable_for_type_inference(dt, stop_gradient=name != "SampledLogits")]
        for name, dt in (
            ("Samples", "int64"),
            ("Probabilities", logits.dtype),
            ("SampledLogits", logits.dtype),
            ("SampledLabels", "int64"),
            ("LogitsDim", "int64"),
            ("LabelsDim", "int64"),
        )
    }
    helper.append_op(
        "sample_logits",
        ins,
        outs,
        {
            "num_samples": num_samples,
            "use_customized_samples": bool(use_customized_samples),
            "uniq": True,
            "remove_accidental_hits": bool(remove_accidental_hits),
            "seed": int(seed),
        },
    )
    if num_true == 1:
        return softmax_with_cross_entropy(outs["SampledLogits"][0], outs["SampledLabels"][0])
    # the true classes are the first num_true columns: a constant soft label, averaged
    from oar.layers.manip import concat
    from oar.layers.tensor import fill_constant_batch_size_like

    soft = concat(
        [
            fill_constant_batch_size_like(logits, [-1, num_true], str(logits.dtype), 1.0),
            fill_constant_batch_size_like(logits, [-1, num_samples], str(logits.dtype), 0.0),
        ],
        axis=1,
    )
    loss = softmax_with_cross_entropy(outs["SampledLogits"][0], soft, soft_label=True)
    return scale(loss, 1.0 / num_true)
