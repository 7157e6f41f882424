"""``tree_conv``: tree-based convolution (TBCNN, Mou et al. 2016) as Fluid 1.8 computes it.

NodesVector [B, nodes, F], EdgeSet [B, edges, 2] (1-based parent, child ids in BFS order,
padded with [0, 0]), Filter [F, 3, out, filters] -> Out [B, nodes, out, filters]. Each node
slot below the batch's largest node id roots a window of the nodes less than ``max_depth``
below it; a node at depth d whose parent has n children, at position p, weighs
``eta_t = (max_depth - d) / max_depth``, ``eta_a = (1 - eta_t) * (0.5 if n == 1 else
p / (n - 1))``, ``eta_b = (1 - eta_t) * (1 - eta_a)`` (Filter slices 2, 0, 1).
"""

from __future__ import annotations

from oar.ops._infer import check_float, compatible, meta
from oar.registry import Attr, GradSpec, OpDef


def _infer(ins, attrs):
    x, e, w = ins["NodesVector"], ins["EdgeSet"], ins["Filter"]
    check_float(ins, "NodesVector")
    if len(x.shape) != 3 or len(e.shape) != 3 or e.shape[2] not in (2, -1) or len(w.shape) != 4:
        raise ValueError(
            f"tree_conv: NodesVector [B, nodes, F], EdgeSet [B, edges, 2] and Filter [F, 3, out, "
            f"filters] expected, given {list(x.shape)}, {list(e.shape)}, {list(w.shape)}"
        )
    if not compatible(x.shape[2], w.shape[0]) or w.shape[1] != 3:
        raise ValueError(
            f"tree_conv: Filter {list(w.shape)} must be [{x.shape[2]}, 3, out, filters]"
        )
    if attrs["max_depth"] < 1:
        raise ValueError(f"tree_conv: max_depth must be >= 1, given {attrs['max_depth']}")
    return {"Out": meta((x.shape[0], x.shape[1], w.shape[2], w.shape[3]), x.dtype)}


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "tree_conv",
            ["NodesVector", "EdgeSet", "Filter"],
            ["Out"],
            {"max_depth": Attr(int, 2)},
            infer_shape=_infer,
            kernel_dtype="NodesVector",
            grad=GradSpec(
                ("NodesVector", "EdgeSet", "Filter", "Out@GRAD"),
                ("NodesVector@GRAD", "Filter@GRAD"),
            ),
        )
    )
