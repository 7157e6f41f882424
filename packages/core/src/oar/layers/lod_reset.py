"""LoD layers (Fluid 1.8 signatures): lod_reset and lod_append."""

from __future__ import annotations

from typing import Any

from oar.layer_helper import LayerHelper, check_variable, is_variable

__all__ = ["lod_reset", "lod_append"]


def _offsets(layer: str, arg: str, v: Any) -> list:
    if not isinstance(v, (list, tuple)) or not all(
        isinstance(i, int) and not isinstance(i, bool) for i in v
    ):
        raise TypeError(f"{layer}: {arg} must be a list of int offsets, given {v!r}")
    return list(v)


def lod_reset(x: Any, y: Any = None, target_lod: Any = None) -> Any:
    """``x``'s data with a new LoD: ``y``'s LoD (or ``y``'s values as offsets when it has
    none), else ``target_lod`` (offsets, e.g. ``[0, 2, 5]``)."""
    check_variable("lod_reset", "x", x)
    helper = LayerHelper("lod_reset")
    out = helper.create_variable_for_type_inference(x.dtype)
    ins = {"X": [x]}
    attrs: dict = {"append": False}
    if y is not None:
        check_variable("lod_reset", "y", y)
        ins["Y"] = [y]
    elif target_lod is not None:
        attrs["target_lod"] = _offsets("lod_reset", "target_lod", target_lod)
    else:
        raise ValueError("lod_reset: give y or target_lod")
    helper.append_op("lod_reset", ins, {"Out": [out]}, attrs)
    return out


def lod_append(x: Any, level: Any) -> Any:
    """``x`` with one more, finest LoD level (offsets, or a Variable holding them)."""
    check_variable("lod_append", "x", x)
    helper = LayerHelper("lod_append")
    out = helper.create_variable_for_type_inference(x.dtype)
    ins = {"X": [x]}
    attrs: dict = {"append": True}
    if is_variable(level):
        ins["Y"] = [level]
    else:
        attrs["target_lod"] = _offsets("lod_append", "level", level)
    helper.append_op("lod_reset", ins, {"Out": [out]}, attrs)
    return out
