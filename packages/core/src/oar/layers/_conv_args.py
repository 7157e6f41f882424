"""Argument normalisation shared by the conv and pool layers (Fluid's forms of size/stride/padding)."""

from __future__ import annotations

from typing import Any

from oar.errors import ArgumentError, ArgumentTypeError, ShapeError
from oar.layer_helper import check_variable


def pair(layer: str, arg: str, value: Any, allow_zero: bool = False) -> list:
    """An int or a 2-sequence of ints -> [h, w]; refuses anything else with a message naming ``arg``."""
    if isinstance(value, bool):
        raise ArgumentTypeError(layer, f"{arg} must be an int or a list of 2 ints, given {value!r}")
    if isinstance(value, int):
        value = [value, value]
    if (
        not isinstance(value, (list, tuple))
        or len(value) != 2
        or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    ):
        raise ArgumentTypeError(layer, f"{arg} must be an int or a list of 2 ints, given {value!r}")
    low = 0 if allow_zero else 1
    if any(v < low for v in value):
        raise ArgumentError(
            layer, f"{arg} must be {'>= 0' if allow_zero else 'positive'}, given {list(value)}"
        )
    return [int(v) for v in value]


def paddings(layer: str, padding: Any, data_format: str = "NCHW") -> tuple:
    """Fluid's padding forms -> (``paddings`` attr, ``padding_algorithm`` attr).

    Accepts an int, [ph, pw], [top, bottom, left, right], four [before, after]
    pairs including the batch and channel dims (which must be [0, 0]), or
    the strings "SAME"/"VALID".
    """
    if isinstance(padding, str):
        alg = padding.upper()
        if alg not in ("SAME", "VALID"):
            raise ArgumentError(
                layer, f"padding string must be 'SAME' or 'VALID', given {padding!r}"
            )
        return [0, 0], alg
    if (
        isinstance(padding, (list, tuple))
        and len(padding) == 4
        and all(isinstance(p, (list, tuple)) for p in padding)
    ):
        spatial = [1, 2] if data_format == "NHWC" else [2, 3]
        other = [i for i in range(4) if i not in spatial]
        if any(list(padding[i]) != [0, 0] for i in other):
            raise ArgumentError(
                layer, f"padding for the batch and channel dims must be [0, 0], given {padding!r}"
            )
        padding = list(padding[spatial[0]]) + list(padding[spatial[1]])
    if isinstance(padding, (list, tuple)) and len(padding) == 4:
        if not all(isinstance(p, int) and not isinstance(p, bool) and p >= 0 for p in padding):
            raise ArgumentError(layer, f"paddings must be non-negative ints, given {padding!r}")
        p = [int(v) for v in padding]
        if p[0] == p[1] and p[2] == p[3]:
            return [p[0], p[2]], "EXPLICIT"
        return p, "EXPLICIT"
    return pair(layer, "padding", padding, allow_zero=True), "EXPLICIT"


def image_input(layer: str, arg: str, input: Any, data_format: str) -> tuple:
    """Check a 4-D image input; returns (channels, height, width) (-1 where unknown)."""
    check_variable(layer, arg, input)
    if data_format not in ("NCHW", "NHWC"):
        raise ArgumentError(layer, f"data_format must be 'NCHW' or 'NHWC', given {data_format!r}")
    shape = list(input.shape)
    if len(shape) != 4:
        raise ShapeError.in_layer(
            layer, f"{arg} '{input.name}' must be 4-D ({data_format}), given shape {shape}"
        )
    if data_format == "NHWC":
        return shape[3], shape[1], shape[2]
    return shape[1], shape[2], shape[3]


def check_bool(layer: str, arg: str, value: Any) -> None:
    if not isinstance(value, bool):
        raise ArgumentTypeError(
            layer, f"{arg} must be a bool, given {type(value).__name__} {value!r}"
        )
