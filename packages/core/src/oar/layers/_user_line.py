"""Every public layer function's errors name the layer and the user's line.

Layers check their arguments before any op exists (so before an op's callsite
could be attached). Wrapping each public layer function once, at import, gives
an error raised inside it the context it lacks, as fields of the structured
error (``oar.errors.OarError``): ``layer`` when it names neither a layer nor an
op, and ``callsite`` = the user's line when it has none. A plain
ValueError/TypeError (from Python, numpy or a helper that does not know the
layer) becomes an :class:`~oar.errors.ArgumentError` /
:class:`~oar.errors.ArgumentTypeError` of the layer, chained to the original;
both subclass the original type.
"""

from __future__ import annotations

import functools
import inspect
import re
import types
from collections.abc import Callable

from oar.errors import (
    ArgumentError,
    ArgumentTypeError,
    KernelNotFoundError,
    OarError,
    OpRuntimeError,
    user_site,
)

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
    """``fn`` whose errors carry the layer (``layer_name`` or fn's name) and the user's line."""
    if getattr(fn, "__oar_user_line__", False):
        return fn
    lname = layer_name or fn.__name__

    @functools.wraps(fn)
    def layer(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (ValueError, TypeError, OpRuntimeError, KernelNotFoundError) as exc:
            # (the last two reach here from eager ops in dygraph mode)
            if not isinstance(exc, OarError):
                # Python's or numpy's own words about an argument of this layer; a bare
                # float("a") message is the one whose argument is named from the call
                msg = _name_converted_arg(fn, args, kwargs, str(exc.args[0]) if exc.args else "")
                cls = ArgumentError if isinstance(exc, ValueError) else ArgumentTypeError
                raise cls(lname, msg, callsite=user_site()) from exc
            if exc.op is None and exc.layer is None:
                exc.layer = lname
            elif exc.layer != lname:
                exc.entry = lname  # the outermost layer, the one the user called, wins
            if exc.callsite is None:
                exc.callsite = user_site()
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
