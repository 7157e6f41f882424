"""Beam-search layers (Fluid 1.8 signatures): gather_tree."""

from __future__ import annotations

from typing import Any

from oar.layer_helper import LayerHelper, check_variable

__all__ = ["gather_tree"]


def gather_tree(ids: Any, parents: Any) -> Any:
    """Whole beam-search paths [max_time, batch, beam] from the ids chosen at every step and
    the beam each came from (back-traced from the last step)."""
    check_variable("gather_tree", "ids", ids)
    check_variable("gather_tree", "parents", parents)
    helper = LayerHelper("gather_tree")
    out = helper.create_variable_for_type_inference(ids.dtype, stop_gradient=True)
    helper.append_op("gather_tree", {"Ids": [ids], "Parents": [parents]}, {"Out": [out]})
    return out
