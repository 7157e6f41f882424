"""``hierarchical_sigmoid``: the loss of a class as a path of binary decisions in a tree.

Default tree (no PathTable): class ``c`` is leaf ``c + num_classes`` of a complete binary
tree; step ``j`` of its path visits node ``(code >> (j + 1)) - 1`` with bit ``(code >> j) & 1``.
Custom trees give PathTable / PathCode [N, L] (node ids and bits, padded with -1). Out [N, 1]
sums ``log(1 + exp(pre)) - bit * pre`` over the path, ``pre = W[node] . x + b[node]``
clipped to [-40, 40]; PreOut [N, L] keeps ``pre`` (0 past the path's end, where each
padded step still adds ``log(2)`` to Out, exactly as Fluid 1.8.5 computes it).
"""

from __future__ import annotations

from oar.ops._infer import check_float, compatible, meta
from oar.registry import Attr, GradSpec, OpDef


def default_code_length(num_classes: int) -> int:
    """Bits of the longest default path (the position of the highest set bit of num_classes-1)."""
    return max(int(num_classes - 1).bit_length(), 1)


def _infer(ins, attrs):
    x, w, lab = ins["X"], ins["W"], ins["Label"]
    check_float(ins, "X")
    if len(x.shape) != 2 or len(w.shape) != 2 or not compatible(x.shape[1], w.shape[1]):
        raise ValueError(
            f"hierarchical_sigmoid: X [N, D] and W [nodes, D] expected, given {list(x.shape)} and {list(w.shape)}"
        )
    if not compatible(lab.shape[0], x.shape[0]):
        raise ValueError(
            f"hierarchical_sigmoid: Label {list(lab.shape)} must have one row per row of X"
        )
    if ins.get("PathTable") is not None:
        length = ins["PathTable"].shape[1]
    else:
        if attrs["num_classes"] < 2:
            raise ValueError(
                f"hierarchical_sigmoid: num_classes must be >= 2, given {attrs['num_classes']}"
            )
        length = default_code_length(attrs["num_classes"])
    return {"Out": meta((x.shape[0], 1), x.dtype), "PreOut": meta((x.shape[0], length), x.dtype)}


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "hierarchical_sigmoid",
            ["X", "W", "Label", "PathTable?", "PathCode?", "Bias?"],
            ["Out", "PreOut"],
            {
                "num_classes": Attr(int, 2),
                "is_sparse": Attr(bool, False),
                "remote_prefetch": Attr(bool, False),
            },
            infer_shape=_infer,
            kernel_dtype="X",
            grad=GradSpec(
                ("X", "W", "Label", "PathTable", "PathCode", "Bias", "PreOut", "Out@GRAD"),
                ("X@GRAD", "W@GRAD", "Bias@GRAD"),
            ),
        )
    )
