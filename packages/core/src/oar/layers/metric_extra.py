"""fluid.layers.auc (persistable bucket counts, cumulative and over a sliding window) and
mean_iou."""

from __future__ import annotations

from oar.errors import ArgumentError
from oar.layer_helper import LayerHelper, check_variable

__all__ = ["auc", "mean_iou"]


def _stat(helper: LayerHelper, shape: list):
    from oar.initializer import Constant

    var = helper.create_global_variable(
        dtype="int64", shape=shape, persistable=True, stop_gradient=True
    )
    helper.set_variable_initializer(var, Constant(0.0))
    return var


def auc(input, label, curve="ROC", num_thresholds=2**12 - 1, topk=1, slide_steps=1):
    """Area under the ROC curve of ``input`` [N, 2] (positive probability last) against
    ``label`` [N, 1]. Returns ``(auc, batch_auc, [batch_stat_pos, batch_stat_neg, stat_pos,
    stat_neg])``: ``auc`` over every batch run so far, ``batch_auc`` over the last
    ``slide_steps`` batches; the stat variables are persistable bucket counts.
    ``curve="PR"`` gives the same (ROC) area, as Fluid 1.8.5's auc op does."""
    from oar.ops.metric_extra import auc_stat_shape

    check_variable("auc", "input", input)
    check_variable("auc", "label", label)
    if curve not in ("ROC", "PR"):
        raise ArgumentError("auc", f"curve must be 'ROC' or 'PR', given {curve!r}")
    if (
        isinstance(num_thresholds, bool)
        or not isinstance(num_thresholds, int)
        or num_thresholds < 1
    ):
        raise ArgumentError(
            "auc", f"num_thresholds must be a positive int, given {num_thresholds!r}"
        )
    if isinstance(slide_steps, bool) or not isinstance(slide_steps, int) or slide_steps < 0:
        raise ArgumentError("auc", f"slide_steps must be an int >= 0, given {slide_steps!r}")
    helper = LayerHelper("auc")
    batch_pos = _stat(helper, auc_stat_shape(num_thresholds, slide_steps))
    batch_neg = _stat(helper, auc_stat_shape(num_thresholds, slide_steps))
    stat_pos = _stat(helper, auc_stat_shape(num_thresholds, 0))
    stat_neg = _stat(helper, auc_stat_shape(num_thresholds, 0))
    auc_out = helper.create_variable_for_type_inference("float64", stop_gradient=True)
    batch_auc_out = helper.create_variable_for_type_inference("float64", stop_gradient=True)
    for out, pos, neg, steps in (
        (batch_auc_out, batch_pos, batch_neg, slide_steps),
        (auc_out, stat_pos, stat_neg, 0),
    ):
        helper.append_op(
            "auc",
            {"Predict": [input], "Label": [label], "StatPos": [pos], "StatNeg": [neg]},
            {"AUC": [out], "StatPosOut": [pos], "StatNegOut": [neg]},
            {"curve": curve, "num_thresholds": num_thresholds, "slide_steps": steps},
        )
    return auc_out, batch_auc_out, [batch_pos, batch_neg, stat_pos, stat_neg]


def mean_iou(input, label, num_classes):
    """Mean intersection-over-union of int class maps; returns ``(mean_iou [1], out_wrong
    [num_classes], out_correct [num_classes])``."""
    check_variable("mean_iou", "input", input)
    check_variable("mean_iou", "label", label)
    if isinstance(num_classes, bool) or not isinstance(num_classes, int) or num_classes < 1:
        raise ArgumentError(
            "mean_iou", f"num_classes must be a positive int, given {num_classes!r}"
        )
    helper = LayerHelper("mean_iou")
    miou = helper.create_variable_for_type_inference("float32", stop_gradient=True)
    wrong = helper.create_variable_for_type_inference("int32", stop_gradient=True)
    correct = helper.create_variable_for_type_inference("int32", stop_gradient=True)
    helper.append_op(
        "mean_iou",
        {"Predictions": [input], "Labels": [label]},
        {"OutMeanIou": [miou], "OutWrong": [wrong], "OutCorrect": [correct]},
        {"num_classes": num_classes},
    )
    return miou, wrong, correct
