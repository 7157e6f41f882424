"""``fluid.contrib`` layers over their own ops (Fluid 1.8's ``contrib.layers.nn``):
``tree_conv``, ``tdm_child``, ``tdm_sampler`` and the text-matching layers ``match_matrix_tensor``, ``var_conv_2d``,
``sequence_topk_avg_pooling``."""

from __future__ import annotations

from typing import Any

from oar.errors import ArgumentError, ArgumentTypeError
from oar.layer_helper import LayerHelper, check_activation, check_variable

__all__ = [
    "tree_conv",
    "match_matrix_tensor",
    "var_conv_2d",
    "sequence_topk_avg_pooling",
    "tdm_child",
    "tdm_sampler",
]


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


def _lod_input(layer: str, name: str, v: Any) -> None:
    check_variable(layer, name, v)
    if v.lod_level < 1 and not _eager():
        raise ArgumentError(
            layer, f"{name} must be a LoD variable (lod_level >= 1), given {v.name}"
        )


def _eager() -> bool:
    from oar.framework import in_dygraph_mode

    return in_dygraph_mode()


def _pair(layer: str, name: str, v: Any) -> list:
    vals = [v, v] if isinstance(v, int) and not isinstance(v, bool) else v
    if (
        not isinstance(vals, (list, tuple))
        or len(vals) != 2
        or not all(isinstance(i, int) and not isinstance(i, bool) and i > 0 for i in vals)
    ):
        raise ArgumentTypeError(
            layer, f"{name} must be a positive int or a list of 2 positive ints, given {v!r}"
        )
    return list(vals)


def match_matrix_tensor(
    x: Any,
    y: Any,
    channel_num: int,
    act: Any = None,
    param_attr: Any = None,
    dtype: str = "float32",
    name: str | None = None,
) -> tuple:
    """For each pair of sequences of ``x`` and ``y`` (LoD, [rows, h] each) and each of the
    ``channel_num`` channels, the matching matrix ``x W[:, t, :] y^T`` (W [h, channel_num,
    h]); returns ``(out, tmp)``: ``out`` [-1, 1] holds the matrices per pair, channel-major
    (then ``act``), ``tmp`` is ``x @ W``."""
    layer = "match_matrix_tensor"
    _lod_input(layer, "x", x)
    _lod_input(layer, "y", y)
    if len(x.shape) != 2 or len(y.shape) != 2 or x.shape[1] != y.shape[1]:
        raise ArgumentError(
            layer,
            f"x and y must be [rows, h] with the same h, given {list(x.shape)} and {list(y.shape)}",
        )
    channels = _positive(layer, "channel_num", channel_num)
    helper = LayerHelper(layer, param_attr=param_attr, act=act, name=name)
    w = helper.create_parameter(
        helper.kwargs.get("param_attr"), [x.shape[1], channels, y.shape[1]], dtype
    )
    out = helper.create_variable_for_type_inference(dtype)
    tmp = helper.create_variable_for_type_inference(dtype)
    helper.append_op(
        layer,
        {"X": [x], "Y": [y], "W": [w]},
        {"Out": [out], "Tmp": [tmp]},
        {"dim_t": channels},
    )
    return helper.append_activation(out), tmp


def var_conv_2d(
    input: Any,
    row: Any,
    col: Any,
    input_channel: int,
    output_channel: int,
    filter_size: Any,
    stride: Any = 1,
    param_attr: Any = None,
    act: Any = None,
    dtype: str = "float32",
    name: str | None = None,
) -> Any:
    """A 2-D convolution of each instance's [input_channel, rows, cols] image, flattened in
    ``input`` (LoD, one column); ``row`` and ``col`` are LoD variables whose sequence lengths
    give each instance's rows and cols. Zero padding ``filter // 2`` before, output
    ``ceil(rows / stride)`` by ``ceil(cols / stride)`` per output channel, then ``act``."""
    layer = "var_conv_2d"
    _lod_input(layer, "input", input)
    _lod_input(layer, "row", row)
    _lod_input(layer, "col", col)
    kh, kw = _pair(layer, "filter_size", filter_size)
    sh, sw = _pair(layer, "stride", stride)
    cin = _positive(layer, "input_channel", input_channel)
    cout = _positive(layer, "output_channel", output_channel)
    helper = LayerHelper(layer, param_attr=param_attr, act=act, name=name)
    w = helper.create_parameter(helper.kwargs.get("param_attr"), [cout, cin * kh * kw], dtype)
    out = helper.create_variable_for_type_inference(dtype)
    tmp = helper.create_variable_for_type_inference(dtype)
    helper.append_op(
        layer,
        {"X": [input], "ROW": [row], "COLUMN": [col], "W": [w]},
        {"Out": [out], "Col": [tmp]},
        {
            "InputChannel": cin,
            "OutputChannel": cout,
            "KernelH": kh,
            "KernelW": kw,
            "StrideH": sh,
            "StrideW": sw,
        },
    )
    return helper.append_activation(out)


def sequence_topk_avg_pooling(input: Any, row: Any, col: Any, topks: Any, channel_num: int) -> Any:
    """For each instance's [channel_num, rows, cols] matrix in ``input`` (LoD, one column;
    sizes from the sequence lengths of ``row`` and ``col``), each row and channel: the sum of
    the k largest values divided by k, for each k in ``topks``. Out is [rows,
    channel_num * len(topks)] with the LoD of ``row``."""
    layer = "sequence_topk_avg_pooling"
    _lod_input(layer, "input", input)
    _lod_input(layer, "row", row)
    _lod_input(layer, "col", col)
    if not isinstance(topks, (list, tuple)) or not topks:
        raise ArgumentTypeError(layer, f"topks must be a non-empty list of ints, given {topks!r}")
    topks = [_positive(layer, "topks[i]", k) for k in topks]
    channels = _positive(layer, "channel_num", channel_num)
    helper = LayerHelper(layer)
    out = helper.create_variable_for_type_inference(input.dtype)
    pos = helper.create_variable_for_type_inference("int32")
    pos.stop_gradient = True
    helper.append_op(
        layer,
        {"X": [input], "ROW": [row], "COLUMN": [col]},
        {"Out": [out], "pos": [pos]},
        {"topks": topks, "channel_num": channels},
    )
    return out


def tdm_child(
    x: Any, node_nums: int, child_nums: int, param_attr: Any = None, dtype: str = "int32"
) -> tuple:
    """The children of each node id of ``x`` in a TDM tree, and whether each is an item leaf:
    returns ``(child, leaf_mask)``, each ``x.shape + [child_nums]`` of ``dtype``. The tree is a
    parameter [node_nums, 3 + child_nums] (``param_attr``; rows: item id, layer id, parent
    id, child ids padded with 0); node 0 is padding (no children)."""
    from oar.framework.dtypes import convert_dtype
    from oar.initializer import Constant

    layer = "tdm_child"
    check_variable(layer, "x", x)
    nodes = _positive(layer, "node_nums", node_nums)
    children = _positive(layer, "child_nums", child_nums)
    out_dtype = convert_dtype(dtype)
    if out_dtype not in ("int32", "int64"):
        raise ArgumentError(layer, f"dtype must be int32 or int64, given {dtype!r}")
    helper = LayerHelper(layer, param_attr=param_attr)
    tree = helper.create_parameter(
        helper.kwargs.get("param_attr"), [nodes, 3 + children], out_dtype,
        default_initializer=Constant(0),
    )  # fmt: skip
    tree.stop_gradient = True
    child = helper.create_variable_for_type_inference(out_dtype)
    leaf = helper.create_variable_for_type_inference(out_dtype)
    helper.append_op(
        layer,
        {"X": [x], "TreeInfo": [tree]},
        {"Child": [child], "LeafMask": [leaf]},
        {"child_nums": children, "dtype": out_dtype},
    )
    child.stop_gradient = leaf.stop_gradient = True
    return child, leaf


def _int_list(layer: str, name: str, v: Any, low: int) -> list:
    if (
        not isinstance(v, (list, tuple))
        or not v
        or any(isinstance(i, bool) or not isinstance(i, int) or i < low for i in v)
    ):
        raise ArgumentError(layer, f"{name} must be a non-empty list of ints >= {low}, given {v!r}")
    return list(v)


def tdm_sampler(
    x: Any,
    neg_samples_num_list: Any,
    layer_node_num_list: Any,
    leaf_node_num: int,
    tree_travel_attr: Any = None,
    tree_layer_attr: Any = None,
    output_positive: bool = True,
    output_list: bool = True,
    seed: int = 0,
    tree_dtype: str = "int32",
    dtype: str = "int32",
) -> tuple:
    """Layer-by-layer samples of a TDM tree for each item id of ``x`` (op ``tdm_sampler``):
    the node on the item's path (when ``output_positive``) and ``neg_samples_num_list[l]``
    other nodes of layer ``l`` drawn uniformly without replacement. The path is the
    parameter [leaf_node_num, layers] (``tree_travel_attr``, 0 past a short path), the
    layers' nodes the parameter [sum(layer_node_num_list), 1] (``tree_layer_attr``).
    Returns (samples, labels, masks): [rows, width] each, or with ``output_list`` lists of
    [rows, width of layer l, 1] per layer. ``seed`` 0 draws from the shared generator; the
    draws differ from Fluid's generator's."""
    from oar import layers
    from oar.framework.dtypes import convert_dtype
    from oar.initializer import Constant

    layer = "tdm_sampler"
    check_variable(layer, "x", x)
    negs = _int_list(layer, "neg_samples_num_list", neg_samples_num_list, 0)
    widths = _int_list(layer, "layer_node_num_list", layer_node_num_list, 1)
    if len(negs) != len(widths):
        raise ArgumentError(
            layer, f"neg_samples_num_list and layer_node_num_list must have one entry per "
            f"layer, given {len(negs)} and {len(widths)}",
        )  # fmt: skip
    leaves = _positive(layer, "leaf_node_num", leaf_node_num)
    tdtype, odtype = convert_dtype(tree_dtype), convert_dtype(dtype)
    if tdtype not in ("int32", "int64") or odtype not in ("int32", "int64"):
        raise ArgumentError(layer, f"tree_dtype and dtype must be int32 or int64, given "
                            f"{tree_dtype!r} and {dtype!r}")  # fmt: skip
    helper = LayerHelper(layer)
    travel = helper.create_parameter(
        tree_travel_attr, [leaves, len(widths)], tdtype, default_initializer=Constant(0)
    )
    nodes = helper.create_parameter(
        tree_layer_attr, [sum(widths), 1], tdtype, default_initializer=Constant(0)
    )
    travel.stop_gradient = nodes.stop_gradient = True
    outs = [helper.create_variable_for_type_inference(odtype) for _ in range(3)]
    offsets = [0]
    for w in widths:
        offsets.append(offsets[-1] + w)
    helper.append_op(
        layer,
        {"X": [x], "Travel": [travel], "Layer": [nodes]},
        {"Out": [outs[0]], "Labels": [outs[1]], "Mask": [outs[2]]},
        {
            "neg_samples_num_list": negs,
            "layer_offset_lod": offsets,
            "output_positive": bool(output_positive),
            "seed": int(seed),
            "dtype": odtype,
        },
    )
    for v in outs:
        v.stop_gradient = True
    if not output_list:
        return tuple(outs)
    sizes = [n + bool(output_positive) for n in negs]
    return tuple(
        [layers.unsqueeze(part, [2]) for part in layers.split(v, sizes, dim=1)] for v in outs
    )
