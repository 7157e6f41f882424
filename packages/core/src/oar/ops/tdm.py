"""Tree-based deep model (TDM) ops of Fluid 1.8's contrib: ``tdm_child``, ``tdm_sampler``.

TreeInfo [node_nums, 3 + child_nums] holds one row per node: item id (non-zero for a leaf
that stands for an item), layer id, parent id, then the child node ids padded with 0.
``tdm_child`` gives, for each node id of X, its child ids (all 0 for node 0, the padding
id) and a LeafMask that is 1 where the child is a leaf with an item.

``tdm_sampler``: for each item id of X, layer by layer, the node on its path (Travel
[leaf_node_num, layers], 0 where the path ends early) when ``output_positive``, then
``neg_samples_num_list[l]`` other nodes of that layer drawn uniformly without replacement
(Layer holds the layers' nodes one after another, ``layer_offset_lod`` their offsets).
Labels are 1 for the positive, 0 for negatives; Mask is 0 for a layer the path lacks
(its samples are 0). Out, Labels and Mask are [rows, sum of the layers' widths].
"""

from __future__ import annotations

from oar.framework.dtypes import convert_dtype
from oar.ops._infer import int_check, meta
from oar.registry import Attr, OpDef

_INTS = ("int32", "int64")


def _int_dtype(v):
    return None if v in _INTS else "must be 'int32' or 'int64'"


def _infer(ins, attrs):
    x, tree = ins["X"], ins["TreeInfo"]
    if x.dtype not in _INTS or tree.dtype not in _INTS:
        raise TypeError(
            f"tdm_child: X and TreeInfo must hold int32 or int64 ids, given {x.dtype} and "
            f"{tree.dtype}"
        )
    cn = attrs["child_nums"]
    if len(tree.shape) != 2 or tree.shape[1] not in (-1, 3 + cn):
        raise ValueError(
            f"tdm_child: TreeInfo must be [node_nums, 3 + child_nums] = [node_nums, {3 + cn}], "
            f"given {list(tree.shape)}"
        )
    dtype = convert_dtype(attrs["dtype"])
    shape = (*x.shape, cn)
    return {"Child": meta(shape, dtype), "LeafMask": meta(shape, dtype)}


def _infer_sampler(ins, attrs):
    x = ins["X"]
    if x.dtype not in _INTS:
        raise TypeError(f"tdm_sampler: X must hold int32 or int64 item ids, given {x.dtype}")
    negs, offsets = attrs["neg_samples_num_list"], attrs["layer_offset_lod"]
    if len(offsets) != len(negs) + 1:
        raise ValueError(
            f"tdm_sampler: layer_offset_lod needs one offset per layer and one more, given "
            f"{offsets} for {len(negs)} layers"
        )
    for layer, (n, a, b) in enumerate(zip(negs, offsets[:-1], offsets[1:])):
        if not 0 <= n < b - a:
            raise ValueError(
                f"tdm_sampler: layer {layer} has {b - a} nodes, so it can give 0 to {b - a - 1} "
                f"negative samples; given {n}"
            )
    width = sum(negs) + len(negs) * bool(attrs["output_positive"])
    dtype = attrs["dtype"]
    return {k: meta((x.shape[0], width), dtype) for k in ("Out", "Labels", "Mask")}


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "tdm_sampler",
            ["X", "Travel", "Layer"],
            ["Out", "Labels", "Mask"],
            {
                "neg_samples_num_list": Attr(list),
                "layer_offset_lod": Attr(list),
                "output_positive": Attr(bool, True),
                "seed": Attr(int, 0),
                "dtype": Attr(str, "int32", _int_dtype),
            },
            infer_shape=_infer_sampler,
            kernel_dtype="X",
            doc="per tree layer: the item's path node and uniformly drawn negatives",
        )
    )
    registry.register_op(
        OpDef(
            "tdm_child",
            ["X", "TreeInfo"],
            ["Child", "LeafMask"],
            {"child_nums": Attr(int, 2, int_check(1)), "dtype": Attr(str, "int32", _int_dtype)},
            infer_shape=_infer,
            kernel_dtype="X",
            doc="the children of each node id in the TDM tree, and whether each is an item leaf",
        )
    )
