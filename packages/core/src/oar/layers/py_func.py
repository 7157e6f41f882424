"""fluid.layers.py_func: a Python forward (and backward) inside a program."""

from __future__ import annotations

from typing import Any

from oar.errors import ArgumentError, ArgumentTypeError
from oar.layer_helper import LayerHelper, check_variable, is_variable

__all__ = ["py_func"]


def _vars(arg: str, v: Any) -> list:
    if v is None:
        return []
    vs = [v] if is_variable(v) else v
    if not isinstance(vs, (list, tuple)):
        raise ArgumentTypeError(
            "py_func", f"{arg} must be a Variable or a list of Variables, given {type(v).__name__}"
        )
    check_variable("py_func", arg, list(vs), allow_list=True)
    return list(vs)


def py_func(func, x, out, backward_func=None, skip_vars_in_backward_input=None):
    """Run ``func(*x_arrays)`` as an op; its results fill ``out`` (Variables made beforehand
    with their shape and dtype, e.g. by ``main.current_block().create_var``). With
    ``backward_func``, gradients flow: it gets ``(*x, *out, *out_grads)`` (minus
    ``skip_vars_in_backward_input``) and returns one gradient per ``x``."""
    from oar.ops.py_func import register_py_func

    if not callable(func):
        raise ArgumentTypeError("py_func", f"func must be callable, given {type(func).__name__}")
    if backward_func is not None and not callable(backward_func):
        raise ArgumentTypeError(
            "py_func", f"backward_func must be callable, given {type(backward_func).__name__}"
        )
    xs, outs = _vars("x", x), _vars("out", out)
    skip = []
    if skip_vars_in_backward_input is not None:
        if backward_func is None:
            raise ArgumentError("py_func", "skip_vars_in_backward_input needs backward_func")
        names = {v.name for v in xs + outs}
        for v in _vars("skip_vars_in_backward_input", skip_vars_in_backward_input):
            if v.name not in names:
                raise ArgumentError(
                    "py_func", f"skip_vars_in_backward_input: '{v.name}' is neither in x nor in out"
                )
            skip.append(v.name)
    helper = LayerHelper("py_func")
    helper.append_op(
        "py_func",
        {"X": xs},
        {"Out": outs},
        {
            "forward_callable_id": register_py_func(func),
            "backward_callable_id": -1
            if backward_func is None
            else register_py_func(backward_func),
            "backward_skip_vars": skip,
        },
    )
    if backward_func is None:
        for o in outs:
            o.stop_gradient = True
    return out
