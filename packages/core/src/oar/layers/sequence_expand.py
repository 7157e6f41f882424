"""Sequence expansion layers (Fluid 1.8 signatures): sequence_expand, sequence_expand_as."""

from __future__ import annotations

from typing import Any

from oar.layer_helper import LayerHelper, check_variable

__all__ = ["sequence_expand", "sequence_expand_as"]


def sequence_expand(x: Any, y: Any, ref_level: int = -1, name: str | None = None) -> Any:
    """Repeat each sequence of ``x`` (each row, when ``x`` has no LoD) as many times as
    ``y``'s sequence at LoD level ``ref_level`` is long."""
    check_variable("sequence_expand", "x", x)
    check_variable("sequence_expand", "y", y)
    if isinstance(ref_level, bool) or not isinstance(ref_level, int):
        raise TypeError(f"sequence_expand: ref_level must be an int, given {ref_level!r}")
    helper = LayerHelper("sequence_expand", name=name)
    out = helper.create_variable_for_type_inference(x.dtype)
    helper.append_op(
        "sequence_expand", {"X": [x], "Y": [y]}, {"Out": [out]}, {"ref_level": ref_level}
    )
    return out


def sequence_expand_as(x: Any, y: Any, name: str | None = None) -> Any:
    """Repeat row ``i`` of ``x`` as many times as ``y``'s sequence ``i`` is long; the
    result takes ``y``'s LoD."""
    check_variable("sequence_expand_as", "x", x)
    check_variable("sequence_expand_as", "y", y)
    helper = LayerHelper("sequence_expand_as", name=name)
    out = helper.create_variable_for_type_inference(x.dtype)
    helper.append_op("sequence_expand_as", {"X": [x], "Y": [y]}, {"Out": [out]})
    return out
