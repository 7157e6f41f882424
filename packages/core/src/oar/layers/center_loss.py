"""fluid.layers.center_loss (Wen et al. 2016): a learned centre per class."""

from __future__ import annotations

from oar.errors import ArgumentError
from oar.layer_helper import LayerHelper, check_variable

__all__ = ["center_loss"]


def center_loss(input, label, num_classes, alpha, param_attr, update_center=True):
    """[N, 1] loss ``0.5 * ||x - c_label||^2``; the centres (a [num_classes, D] parameter from
    ``param_attr``) move towards their samples by ``alpha`` each step when ``update_center``."""
    from oar.initializer import Constant
    from oar.layers.tensor import fill_constant

    check_variable("center_loss", "input", input)
    check_variable("center_loss", "label", label)
    if isinstance(num_classes, bool) or not isinstance(num_classes, int) or num_classes < 1:
        raise ArgumentError(
            "center_loss", f"num_classes must be a positive int, given {num_classes!r}"
        )
    if len(input.shape) != 2 or input.shape[1] < 0:
        raise ArgumentError(
            "center_loss", f"input must be [N, D] with a known D, given {list(input.shape)}"
        )
    helper = LayerHelper("center_loss")
    dtype = str(input.dtype)
    centers = helper.create_parameter(
        param_attr, [num_classes, input.shape[1]], dtype, default_initializer=Constant(0.0)
    )
    centers.stop_gradient = True
    if isinstance(alpha, (int, float)) and not isinstance(alpha, bool):
        rate = fill_constant([1], dtype, float(alpha))
    else:
        check_variable("center_loss", "alpha", alpha)
        rate = alpha
    diff = helper.create_variable_for_type_inference(dtype)
    loss = helper.create_variable_for_type_inference(dtype)
    helper.append_op(
        "center_loss",
        {"X": [input], "Label": [label], "Centers": [centers], "CenterUpdateRate": [rate]},
        {"SampleCenterDiff": [diff], "Loss": [loss], "CentersOut": [centers]},
        {"cluster_num": num_classes, "need_update": bool(update_center)},
    )
    return loss
