"""SelectedRows helpers: merge_selected_rows (sum repeated rows) and get_tensor_from_selected_rows
(the value tensor of the stored rows)."""

from __future__ import annotations

from oar.ops._infer import meta
from oar.registry import OpDef


def _sparse_out(inputs, outputs, attrs):
    return {n: "selected_rows" for n in outputs.get("Out", ())}


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "merge_selected_rows",
            ["X"],
            ["Out"],
            {},
            infer_shape=lambda ins, a: {"Out": ins["X"]},
            infer_var_type=_sparse_out,
            doc="Out holds each row of X once, repeated rows summed",
        )
    )
    registry.register_op(
        OpDef(
            "get_tensor_from_selected_rows",
            ["X"],
            ["Out"],
            {},
            infer_shape=lambda ins, a: {
                "Out": meta((-1,) + tuple(ins["X"].shape[1:]), ins["X"].dtype)
            },
            doc="Out is the [rows, ...] value tensor of a SelectedRows X",
        )
    )
