"""Sequence rearrangement layers (Fluid 1.8 signatures)."""

from __future__ import annotations

from typing import Any

from oar.layer_helper import LayerHelper, check_variable

__all__ = [
    "sequence_reshape",
    "sequence_reverse",
    "sequence_concat",
    "sequence_slice",
    "sequence_enumerate",
    "sequence_scatter",
]


def _positive_int(layer: str, arg: str, v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
        raise ValueError(f"{layer}: {arg} must be a positive int, given {v!r}")
    return v


def _simple(op: str, ins: dict, out_slot: str, attrs: dict | None = None, name=None) -> Any:
    helper = LayerHelper(op, name=name)
    first = next(iter(ins.values()))[0]
    out = helper.create_variable_for_type_inference(first.dtype)
    helper.append_op(op, ins, {out_slot: [out]}, attrs or {})
    return out


def sequence_reshape(input: Any, new_dim: int) -> Any:
    """Re-cut every sequence of a [rows, width] LoDTensor into rows of ``new_dim``."""
    check_variable("sequence_reshape", "input", input)
    new_dim = _positive_int("sequence_reshape", "new_dim", new_dim)
    return _simple("sequence_reshape", {"X": [input]}, "Out", {"new_dim": new_dim})


def sequence_reverse(x: Any, name: str | None = None) -> Any:
    """Reverse the rows of every sequence."""
    check_variable("sequence_reverse", "x", x)
    return _simple("sequence_reverse", {"X": [x]}, "Y", name=name)


def sequence_concat(input: Any, name: str | None = None) -> Any:
    """Join the inputs sequence by sequence: sequence i of the output is sequence i of
    ``input[0]``, then of ``input[1]``, ..."""
    check_variable("sequence_concat", "input", input, allow_list=True)
    if not isinstance(input, (list, tuple)) or not input:
        raise TypeError(
            f"sequence_concat: input must be a non-empty list of Variables, given {input!r}"
        )
    return _simple("sequence_concat", {"X": list(input)}, "Out", name=name)


def sequence_slice(input: Any, offset: Any, length: Any, name: str | None = None) -> Any:
    """Rows ``offset[i] .. offset[i] + length[i]`` of every sequence ``i`` (int64 [N, 1])."""
    for arg, v in (("input", input), ("offset", offset), ("length", length)):
        check_variable("sequence_slice", arg, v)
    return _simple(
        "sequence_slice", {"X": [input], "Offset": [offset], "Length": [length]}, "Out", name=name
    )


def sequence_enumerate(
    input: Any, win_size: int, pad_value: int = 0, name: str | None = None
) -> Any:
    """Every window of ``win_size`` ids inside each sequence, ``pad_value`` past its end."""
    check_variable("sequence_enumerate", "input", input)
    win_size = _positive_int("sequence_enumerate", "win_size", win_size)
    return _simple(
        "sequence_enumerate",
        {"X": [input]},
        "Out",
        {"win_size": win_size, "pad_value": int(pad_value)},
        name=name,
    )


def sequence_scatter(input: Any, index: Any, updates: Any, name: str | None = None) -> Any:
    """``out = input``; ``out[i, index[j]] += updates[j]`` for the ids ``j`` of sequence ``i``."""
    for arg, v in (("input", input), ("index", index), ("updates", updates)):
        check_variable("sequence_scatter", arg, v)
    return _simple(
        "sequence_scatter", {"X": [input], "Ids": [index], "Updates": [updates]}, "Out", name=name
    )
