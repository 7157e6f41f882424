"""fluid.layers.hsigmoid: hierarchical sigmoid loss over the default or a custom tree."""

from __future__ import annotations

from oar.errors import ArgumentError
from oar.layer_helper import LayerHelper, check_variable

__all__ = ["hsigmoid"]


def hsigmoid(
    input,
    label,
    num_classes,
    param_attr=None,
    bias_attr=None,
    name=None,
    path_table=None,
    path_code=None,
    is_custom=False,
    is_sparse=False,
):
    """[N, 1] loss of each ``label`` as a path of binary decisions. Default tree: W is
    [num_classes - 1, D]; with ``is_custom`` give ``path_table`` / ``path_code`` (node ids
    and bits, -1 padded) and ``num_classes`` non-leaf nodes (W [num_classes, D])."""
    check_variable("hsigmoid", "input", input)
    check_variable("hsigmoid", "label", label)
    if isinstance(num_classes, bool) or not isinstance(num_classes, int) or num_classes < 2:
        raise ArgumentError("hsigmoid", f"num_classes must be an int >= 2, given {num_classes!r}")
    if is_custom and (path_table is None or path_code is None):
        raise ArgumentError("hsigmoid", "is_custom=True needs path_table and path_code")
    if not is_custom and (path_table is not None or path_code is not None):
        raise ArgumentError(
            "hsigmoid", "path_table and path_code are only used with is_custom=True"
        )
    if len(input.shape) != 2 or input.shape[1] < 0:
        raise ArgumentError(
            "hsigmoid", f"input must be [N, D] with a known D, given {list(input.shape)}"
        )
    helper = LayerHelper("hierarchical_sigmoid", name=name)
    dtype = str(input.dtype)
    rows = num_classes if is_custom else num_classes - 1
    w = helper.create_parameter(param_attr, [rows, input.shape[1]], dtype)
    ins = {"X": [input], "W": [w], "Label": [label]}
    if is_custom:
        check_variable("hsigmoid", "path_table", path_table)
        check_variable("hsigmoid", "path_code", path_code)
        ins["PathTable"], ins["PathCode"] = [path_table], [path_code]
    b = helper.create_parameter(bias_attr, [rows, 1], dtype, is_bias=True)
    if b is not None:
        ins["Bias"] = [b]
    out = helper.create_variable_for_type_inference(dtype)
    pre = helper.create_variable_for_type_inference(dtype, stop_gradient=True)
    helper.append_op(
        "hierarchical_sigmoid",
        ins,
        {"Out": [out], "PreOut": [pre]},
        {"num_classes": num_classes, "is_sparse": bool(is_sparse)},
    )
    return out
