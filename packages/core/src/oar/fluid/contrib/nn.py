"""``fluid.contrib`` layers over their own ops (Fluid 1.8's ``contrib.layers.nn``):
``tree_conv``."""

from __future__ import annotations

from typing import Any

from oar.errors import ArgumentError
from oar.layer_helper import LayerHelper, check_activation, check_variable

__all__ = ["tree_conv"]


def _positive(layer: str, name: str, v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise ArgumentError(layer, f"{name} must be a positive int, given {v!r}")
    return v


def tree_conv(
    nodes_vector: Any,
    edge_set: Any,
    output_size: int,
    num_filters: int = 1,
    max_depth: int = 2,
    act: str = "tanh",
    param_attr: Any = None,
    bias_attr: Any = None,
    name: str | None = None,
) -> Any:
    """Tree-based convolution (op ``tree_conv``, as ``dygraph.TreeConv``) of ``nodes_vector``
    [B, nodes, feature_size] over the trees of ``edge_set`` [B, edges, 2] (1-based parent,
    child ids): filter [feature_size, 3, output_size, num_filters], a bias over
    [nodes, output_size, num_filters] as Fluid 1.8.5 makes it, then ``act``."""
    layer = "tree_conv"
    check_variable(layer, "nodes_vector", nodes_vector)
    check_variable(layer, "edge_set", edge_set)
    if act is not None:
        check_activation(layer, act)
    if len(nodes_vector.shape) != 3 or len(edge_set.shape) != 3:
        raise ArgumentError(
            layer,
            f"nodes_vector must be [B, nodes, feature_size] and edge_set [B, edges, 2], given "
            f"{list(nodes_vector.shape)} and {list(edge_set.shape)}",
        )
    shape = [
        nodes_vector.shape[2],
        3,
        _positive(layer, "output_size", output_size),
        _positive(layer, "num_filters", num_filters),
    ]
    depth = _positive(layer, "max_depth", max_depth)
    helper = LayerHelper(layer, param_attr=param_attr, bias_attr=bias_attr, act=act, name=name)
    dtype = nodes_vector.dtype
    w = helper.create_parameter(helper.kwargs.get("param_attr"), shape, dtype)
    out = helper.create_variable_for_type_inference(dtype)
    helper.append_op(
        layer,
        {"NodesVector": [nodes_vector], "EdgeSet": [edge_set], "Filter": [w]},
        {"Out": [out]},
        {"max_depth": depth},
    )
    pre_act = helper.append_bias_op(out) if bias_attr is not False else out
    return helper.append_activation(pre_act)
