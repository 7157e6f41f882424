"""Every public layer function's errors name the user's line.

Layers check their arguments before any op exists (so before an op's callsite
could be attached). Wrapping each public layer function once, at import,
appends ``called at file:line`` to a ValueError/TypeError raised inside it
unless the message already names a line, and prefixes ``<layer>: `` when the
message names neither the layer nor an op (e.g. a dtype helper's "unsupported
dtype 'floaty'"); the exception keeps its type.
"""

from __future__ import annotations

import functools
import inspect
import re
import types
from collections.abc import Callable

from oar.errors import KernelNotFoundError, OpRuntimeError, at_user_line

_MARKERS = ("created at ", "called at ")
# Python's own conversion errors (``float("a")``, ``int("x")``) name neither the argument nor the layer
_CONVERSION = re.compile(
    r"^(could not convert string to float: |invalid literal for int\(\) with base 10: )(.*)$"
)


def _name_converted_arg(fn: Callable, args: tuple, kwargs: dict, msg: str) -> str:
    """Rewrite a bare conversion error to name the argument that held the bad value, if one did."""
    m = _CONVERSION.match(msg)
    if not m:
        return msg
    try:
        bound = inspect.signature(fn).bind(*args, **kwargs)
    except (TypeError, ValueError):
        return msg
    for arg, value in bound.arguments.items():
        if isinstance(value, str) and repr(value) == m.group(2):
            want = "an int" if m.group(1).startswith("invalid literal for int") else "a number"
            return f"argument '{arg}' must be {want}, given {value!r}"
    return msg


def with_user_line(fn: Callable, layer_name: str | None = None) -> Callable:
    """``fn`` whose ValueError/TypeError messages name the layer (``layer_name`` or fn's name) and user line."""
    if getattr(fn, "__oar_user_line__", False):
        return fn
    lname = layer_name or fn.__name__

    @functools.wraps(fn)
    def layer(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (ValueError, TypeError, OpRuntimeError, KernelNotFoundError) as exc:
            # (the last two reach here from eager ops in dygraph mode)
            msg = str(exc.args[0]) if exc.args else ""
            msg = _name_converted_arg(fn, args, kwargs, msg)
            body = msg.split("\n  called at ")[0].split("\n  created at ")[
                0
            ]  # not the quoted source
            if not (
                body.startswith(lname)
                or f"'{lname}'" in body
                or "op '" in body
                or "layer '" in body
                or f"{lname}:" in body
            ):
                msg = f"{lname}: {msg}"
            if not any(m in msg for m in _MARKERS):
                msg += at_user_line()
            exc.args = (msg,) + tuple(exc.args[1:])
            raise

    layer.__oar_user_line__ = True
    return layer


def wrap_module_functions(namespace: dict, modules: list) -> None:
    """Wrap the ``__all__`` functions of ``modules`` in place and in ``namespace``."""
    for mod in modules:
        for name in getattr(mod, "__all__", ()):
            obj = getattr(mod, name, None)
            if isinstance(obj, types.FunctionType):
                wrapped = with_user_line(obj)
                setattr(mod, name, wrapped)
                if namespace.get(name) is obj:
                    namespace[name] = wrapped
