"""``fluid.layers.Print``: print a tensor each time the program runs (and its gradient, by phase)."""

from __future__ import annotations

from typing import Any

from oar.errors import ArgumentError, ArgumentTypeError
from oar.layer_helper import LayerHelper, check_variable

__all__ = ["Print"]

_DTYPES = ("float32", "float64", "int32", "int64", "bool", "float16")


def Print(
    input: Any,
    first_n: int = -1,
    message: str | None = None,
    summarize: int = 20,
    print_tensor_name: bool = True,
    print_tensor_type: bool = True,
    print_tensor_shape: bool = True,
    print_tensor_lod: bool = True,
    print_phase: str = "both",
) -> Any:
    """Returns ``input`` passed through a ``print`` op that prints at run time.

    ``first_n`` limits how many runs print (-1: every run); ``summarize`` how many
    elements (-1: all); ``print_phase`` is 'forward', 'backward' or 'both'
    (the backward phase prints the gradient flowing back through this point).
    """
    check_variable("Print", "input", input)
    if input.dtype not in _DTYPES:
        raise ArgumentTypeError(
            "Print", f"input must have dtype in {list(_DTYPES)}, given {input.dtype}"
        )
    if not isinstance(print_phase, str) or print_phase.upper() not in (
        "FORWARD",
        "BACKWARD",
        "BOTH",
    ):
        raise ArgumentError(
            "Print", f"print_phase must be 'forward', 'backward' or 'both', given {print_phase!r}"
        )
    for arg, v in (("first_n", first_n), ("summarize", summarize)):
        if isinstance(v, bool) or not isinstance(v, int):
            raise ArgumentTypeError("Print", f"{arg} must be an int, given {type(v).__name__}")
    helper = LayerHelper("print_" + input.name)
    out = helper.create_variable_for_type_inference(input.dtype)
    helper.append_op(
        "print",
        {"In": [input]},
        {"Out": [out]},
        {
            "first_n": first_n,
            "summarize": summarize,
            "message": message or "",
            "print_tensor_name": print_tensor_name,
            "print_tensor_type": print_tensor_type,
            "print_tensor_shape": print_tensor_shape,
            "print_tensor_lod": print_tensor_lod,
            "print_phase": print_phase.upper(),
            "op_print_var": input.name,
        },
    )
    return out
