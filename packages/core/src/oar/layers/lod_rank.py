"""Rank-table layers (``DynamicRNN``'s building blocks): ``reorder_lod_tensor_by_rank``, and
``lod_rank_table``, ``max_sequence_len``, ``lod_tensor_to_array``, ``array_to_lod_tensor``,
``shrink_memory`` (in Fluid 1.8 found in ``fluid.layers.control_flow``)."""

from __future__ import annotations

from typing import Any

from oar.framework.dtypes import VarType
from oar.layer_helper import LayerHelper, check_variable

__all__ = ["reorder_lod_tensor_by_rank"]


def _one(op: str, inputs: dict, dtype: Any, attrs: dict | None = None, **var: Any) -> Any:
    helper = LayerHelper(op)
    if var:
        out = helper.create_variable(name=f"{helper.name}.out", dtype=dtype, **var)
    else:
        out = helper.create_variable_for_type_inference(dtype)
    helper.append_op(op, inputs, {"Out": [out]}, attrs or {})
    return out


def lod_rank_table(x: Any, level: int = 0) -> Any:
    """The sequences of ``x``'s LoD ``level`` sorted by length, longest first."""
    check_variable("lod_rank_table", "x", x)
    out = _one("lod_rank_table", {"X": [x]}, x.dtype, {"level": int(level)}, type=VarType.RAW)
    out.stop_gradient = True
    return out


def max_sequence_len(rank_table: Any) -> Any:
    """The longest sequence's length (int64 [1])."""
    out = _one("max_sequence_len", {"RankTable": [rank_table]}, "int64")
    out.stop_gradient = True
    return out


def lod_tensor_to_array(x: Any, table: Any) -> Any:
    """One batch per time step: the rows of the sequences still running, in rank order."""
    check_variable("lod_tensor_to_array", "x", x)
    out = _one(
        "lod_tensor_to_array",
        {"X": [x], "RankTable": [table]},
        x.dtype,
        type=VarType.LOD_TENSOR_ARRAY,
        shape=[-1] + list(x.shape[1:]),
    )
    # the steps of a nested sequence are sequences: the levels below the table's
    out.lod_level = max(int(x.lod_level or 0) - _level_of(table) - 1, 0)
    return out


def _level_of(table: Any) -> int:
    for op in table.block.ops:
        if table.name in op.output_arg_names and op.type == "lod_rank_table":
            return int(op.attrs.get("level", 0))
    return 0


def array_to_lod_tensor(x: Any, table: Any) -> Any:
    """The inverse of :func:`lod_tensor_to_array`: a LoD tensor in the original order."""
    out = _one("array_to_lod_tensor", {"X": [x], "RankTable": [table]}, x.dtype)
    out.lod_level = max(out.lod_level, int(getattr(x, "lod_level", 0) or 0) + 1, 1)
    return out


def shrink_memory(x: Any, i: Any, table: Any) -> Any:
    """The first rows of ``x``: one per sequence still running at step ``i``."""
    check_variable("shrink_memory", "x", x)
    return _one("shrink_rnn_memory", {"X": [x], "RankTable": [table], "I": [i]}, x.dtype)


def reorder_lod_tensor_by_rank(x: Any, rank_table: Any) -> Any:
    """Rows of ``x`` (one per sequence) in the rank table's order."""
    check_variable("reorder_lod_tensor_by_rank", "x", x)
    return _one("reorder_lod_tensor_by_rank", {"X": [x], "RankTable": [rank_table]}, x.dtype)
