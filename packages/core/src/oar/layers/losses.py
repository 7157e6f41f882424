"""Loss layers: cross_entropy and square_error_cost on probabilities, and the losses on
logits and regression targets (Fluid 1.5-1.8 signatures)."""

from __future__ import annotations

from typing import Any

from oar.errors import ArgumentError
from oar.layer_helper import LayerHelper, check_variable

__all__ = [
    "cross_entropy",
    "square_error_cost",
    "softmax_with_cross_entropy",
    "sigmoid_cross_entropy_with_logits",
    "log_loss",
    "huber_loss",
    "smooth_l1",
    "bpr_loss",
    "mse_loss",
    "kldiv_loss",
    "margin_rank_loss",
    "rank_loss",
    "dice_loss",
    "npair_loss",
    "teacher_student_sigmoid_loss",
    "sigmoid_focal_loss",
]


def _vars(layer: str, **named: Any) -> None:
    for arg, v in named.items():
        check_variable(layer, arg, v)


def cross_entropy(
    input: Any, label: Any, soft_label: bool = False, ignore_index: int = -100
) -> Any:
    """-log(input[label]) per sample; ``input`` holds probabilities (e.g. a softmax)."""
    helper = LayerHelper("cross_entropy")
    check_variable("cross_entropy", "input", input)
    check_variable("cross_entropy", "label", label)
    out = helper.create_variable_for_type_inference(input.dtype)
    helper.append_op(
        "cross_entropy",
        {"X": [input], "Label": [label]},
        {"Y": [out]},
        {"soft_label": soft_label, "ignore_index": ignore_index},
    )
    return out


def square_error_cost(input: Any, label: Any) -> Any:
    """(input - label)^2, elementwise."""
    helper = LayerHelper("square_error_cost")
    check_variable("square_error_cost", "input", input)
    check_variable("square_error_cost", "label", label)
    minus = helper.create_variable_for_type_inference(input.dtype)
    helper.append_op("elementwise_sub", {"X": [input], "Y": [label]}, {"Out": [minus]})
    out = helper.create_variable_for_type_inference(input.dtype)
    helper.append_op("square", {"X": [minus]}, {"Out": [out]})
    return out


def softmax_with_cross_entropy(
    logits: Any,
    label: Any,
    soft_label: bool = False,
    ignore_index: int = -100,
    numeric_stable_mode: bool = True,
    return_softmax: bool = False,
    axis: int = -1,
) -> Any:
    """Cross entropy of softmax(logits) in one numerically stable op; returns loss (and the softmax)."""
    helper = LayerHelper("softmax_with_cross_entropy")
    _vars("softmax_with_cross_entropy", logits=logits, label=label)
    rank = len(logits.shape)
    if not isinstance(axis, int) or not -rank <= axis < rank:
        raise ArgumentError(
            "softmax_with_cross_entropy", f"axis must be in [-{rank}, {rank}), given {axis!r}"
        )
    softmax = helper.create_variable_for_type_inference(logits.dtype)
    loss = helper.create_variable_for_type_inference(logits.dtype)
    helper.append_op(
        "softmax_with_cross_entropy",
        {"Logits": [logits], "Label": [label]},
        {"Softmax": [softmax], "Loss": [loss]},
        {
            "soft_label": bool(soft_label),
            "ignore_index": int(ignore_index),
            "numeric_stable_mode": bool(numeric_stable_mode),
            "axis": axis,
        },
    )
    return (loss, softmax) if return_softmax else loss


def sigmoid_cross_entropy_with_logits(
    x: Any, label: Any, ignore_index: int = -100, name: str | None = None, normalize: bool = False
) -> Any:
    """Elementwise logistic loss of logits ``x`` against 0/1 (or soft) labels."""
    helper = LayerHelper("sigmoid_cross_entropy_with_logits", name=name)
    _vars("sigmoid_cross_entropy_with_logits", x=x, label=label)
    out = helper.create_variable_for_type_inference(x.dtype)
    helper.append_op(
        "sigmoid_cross_entropy_with_logits",
        {"X": [x], "Label": [label]},
        {"Out": [out]},
        {"ignore_index": int(ignore_index), "normalize": bool(normalize)},
    )
    return out


def log_loss(input: Any, label: Any, epsilon: float = 1e-4, name: str | None = None) -> Any:
    """Negative log likelihood of probabilities ``input`` [N, 1] for 0/1 labels."""
    helper = LayerHelper("log_loss", name=name)
    _vars("log_loss", input=input, label=label)
    loss = helper.create_variable_for_type_inference(input.dtype)
    helper.append_op(
        "log_loss",
        {"Predicted": [input], "Labels": [label]},
        {"Loss": [loss]},
        {"epsilon": float(epsilon)},
    )
    return loss


def huber_loss(input: Any, label: Any, delta: float) -> Any:
    """Quadratic within ``delta`` of the label, linear beyond; elementwise, any shape."""
    helper = LayerHelper("huber_loss")
    _vars("huber_loss", input=input, label=label)
    if not isinstance(delta, (int, float)) or delta <= 0:
        raise ArgumentError("huber_loss", f"delta must be a positive number, given {delta!r}")
    residual = helper.create_variable_for_type_inference(input.dtype)
    out = helper.create_variable_for_type_inference(input.dtype)
    helper.append_op(
        "huber_loss",
        {"X": [input], "Y": [label]},
        {"Out": [out], "Residual": [residual]},
        {"delta": float(delta)},
    )
    return out


def smooth_l1(
    x: Any,
    y: Any,
    inside_weight: Any = None,
    outside_weight: Any = None,
    sigma: float | None = None,
) -> Any:
    """Per-sample sum of the smooth L1 distance; returns [N, 1]."""
    helper = LayerHelper("smooth_l1_loss")
    _vars("smooth_l1", x=x, y=y)
    if sigma is not None and (not isinstance(sigma, (int, float)) or sigma <= 0):
        raise ArgumentError("smooth_l1", f"sigma must be a positive number, given {sigma!r}")
    inputs = {"X": [x], "Y": [y]}
    if inside_weight is not None:
        check_variable("smooth_l1", "inside_weight", inside_weight)
        inputs["InsideWeight"] = [inside_weight]
    if outside_weight is not None:
        check_variable("smooth_l1", "outside_weight", outside_weight)
        inputs["OutsideWeight"] = [outside_weight]
    diff = helper.create_variable_for_type_inference(x.dtype)
    loss = helper.create_variable_for_type_inference(x.dtype)
    helper.append_op(
        "smooth_l1_loss",
        inputs,
        {"Diff": [diff], "Out": [loss]},
        {"sigma": float(sigma if sigma is not None else 1.0)},
    )
    return loss


def bpr_loss(input: Any, label: Any, name: str | None = None) -> Any:
    """Bayesian personalised ranking: the label item against every other item; returns [N, 1]."""
    helper = LayerHelper("bpr_loss", name=name)
    _vars("bpr_loss", input=input, label=label)
    out = helper.create_variable_for_type_inference(input.dtype)
    helper.append_op("bpr_loss", {"X": [input], "Label": [label]}, {"Y": [out]})
    return out


def mse_loss(input: Any, label: Any) -> Any:
    """mean((input - label)^2) as a [1] tensor (square_error_cost, then reduce_mean)."""
    from oar.layers.reduce import reduce_mean

    _vars("mse_loss", input=input, label=label)
    return reduce_mean(square_error_cost(input, label))


def kldiv_loss(x: Any, target: Any, reduction: str = "mean", name: str | None = None) -> Any:
    """KL(target || exp(x)) for log-probabilities ``x``; ``reduction`` none/batchmean/mean/sum."""
    helper = LayerHelper("kldiv_loss", name=name)
    _vars("kldiv_loss", x=x, target=target)
    if reduction not in ("none", "batchmean", "mean", "sum"):
        raise ArgumentError(
            "kldiv_loss",
            f"reduction must be one of none, batchmean, mean, sum; given {reduction!r}",
        )
    loss = helper.create_variable_for_type_inference(x.dtype)
    helper.append_op(
        "kldiv_loss", {"X": [x], "Target": [target]}, {"Loss": [loss]}, {"reduction": reduction}
    )
    return loss


def margin_rank_loss(
    label: Any, left: Any, right: Any, margin: float = 0.1, name: str | None = None
) -> Any:
    """max(0, -label * (left - right) + margin) for labels in {-1, 1}; inputs are [N, 1]."""
    helper = LayerHelper("margin_rank_loss", name=name)
    _vars("margin_rank_loss", label=label, left=left, right=right)
    out = helper.create_variable_for_type_inference(left.dtype)
    act = helper.create_variable_for_type_inference(left.dtype)
    helper.append_op(
        "margin_rank_loss",
        {"Label": [label], "X1": [left], "X2": [right]},
        {"Out": [out], "Activated": [act]},
        {"margin": float(margin)},
    )
    return out


def rank_loss(label: Any, left: Any, right: Any, name: str | None = None) -> Any:
    """RankNet: log(1 + exp(left - right)) - label * (left - right); inputs are [N, 1]."""
    helper = LayerHelper("rank_loss", name=name)
    _vars("rank_loss", label=label, left=left, right=right)
    out = helper.create_variable_for_type_inference(left.dtype)
    helper.append_op(
        "rank_loss", {"Label": [label], "Left": [left], "Right": [right]}, {"Out": [out]}
    )
    return out


def dice_loss(input: Any, label: Any, epsilon: float = 1e-5, name: str | None = None) -> Any:
    """Mean of 1 - 2|X n Y| / (|X| + |Y| + epsilon) with one-hot labels (class ids [..., 1])."""
    from oar.layers.elementwise import elementwise_add, elementwise_div, elementwise_mul
    from oar.layers.embedding import one_hot
    from oar.layers.math import scale
    from oar.layers.reduce import reduce_mean, reduce_sum

    _vars("dice_loss", input=input, label=label)
    if input.shape[-1] < 1:
        raise ArgumentError(
            "dice_loss",
            f"input's last dim (classes) must be known, given shape {list(input.shape)}",
        )
    label = one_hot(label, depth=input.shape[-1])
    dims = list(range(1, len(input.shape)))
    inse = reduce_sum(elementwise_mul(input, label), dim=dims)
    denom = elementwise_add(reduce_sum(input, dim=dims), reduce_sum(label, dim=dims))
    score = elementwise_div(scale(inse, 2.0), scale(denom, 1.0, float(epsilon)))
    return reduce_mean(scale(score, -1.0, 1.0))


def npair_loss(anchor: Any, positive: Any, labels: Any, l2_reg: float = 0.002) -> Any:
    """N-pair loss: softmax cross entropy of anchor-positive similarities against same-label targets,
    plus ``l2_reg`` on the embeddings."""
    from oar.layers.compare import equal
    from oar.layers.elementwise import elementwise_add, elementwise_div, elementwise_mul
    from oar.layers.manip import expand, transpose
    from oar.layers.math import matmul, scale
    from oar.layers.reduce import reduce_mean, reduce_sum
    from oar.layers.reshape import reshape
    from oar.layers.tensor import cast

    _vars("npair_loss", anchor=anchor, positive=positive, labels=labels)
    batch = labels.shape[0]
    if batch < 1:
        raise ArgumentError(
            "npair_loss", f"labels need a known batch size, given shape {list(labels.shape)}"
        )
    lab = expand(reshape(labels, [batch, 1]), [1, batch])
    lab = cast(equal(lab, transpose(lab, [1, 0])), "float32")
    lab = elementwise_div(lab, reduce_sum(lab, dim=1, keep_dim=True))
    from oar.layers.activation import square

    l2 = elementwise_add(
        reduce_mean(reduce_sum(square(anchor), 1)), reduce_mean(reduce_sum(square(positive), 1))
    )
    l2 = scale(scale(l2, 0.25), float(l2_reg))
    sim = matmul(anchor, positive, transpose_y=True)
    ce = softmax_with_cross_entropy(sim, lab, soft_label=True)
    celoss = reduce_mean(reduce_sum(elementwise_mul(lab, ce), 0))
    return elementwise_add(l2, celoss)


def teacher_student_sigmoid_loss(
    input: Any, label: Any, soft_max_up_bound: float = 15.0, soft_max_lower_bound: float = -15.0
) -> Any:
    """Click loss plus a teacher score in one label: < -1 no click, [-1, 0) click, [0, 1) no click with
    teacher score, >= 1 click with score label - 1."""
    helper = LayerHelper("teacher_student_sigmoid_loss")
    _vars("teacher_student_sigmoid_loss", input=input, label=label)
    if soft_max_lower_bound >= soft_max_up_bound:
        raise ArgumentError(
            "teacher_student_sigmoid_loss",
            f"soft_max_lower_bound ({soft_max_lower_bound}) must be "
            f"below soft_max_up_bound ({soft_max_up_bound})",
        )
    out = helper.create_variable_for_type_inference(input.dtype)
    helper.append_op(
        "teacher_student_sigmoid_loss",
        {"X": [input], "Label": [label]},
        {"Y": [out]},
        {
            "soft_max_up_bound": float(soft_max_up_bound),
            "soft_max_lower_bound": float(soft_max_lower_bound),
        },
    )
    return out


def sigmoid_focal_loss(
    x: Any, label: Any, fg_num: Any, gamma: float = 2.0, alpha: float = 0.25
) -> Any:
    """Focal loss on per-class logits ``x`` [N, C]; ``label`` [N, 1] holds 1-based class ids (0 background,
    -1 ignored); ``fg_num`` [1] is the foreground count that normalises it."""
    helper = LayerHelper("sigmoid_focal_loss")
    _vars("sigmoid_focal_loss", x=x, label=label, fg_num=fg_num)
    out = helper.create_variable_for_type_inference(x.dtype)
    helper.append_op(
        "sigmoid_focal_loss",
        {"X": [x], "Label": [label], "FgNum": [fg_num]},
        {"Out": [out]},
        {"gamma": float(gamma), "alpha": float(alpha)},
    )
    return out
