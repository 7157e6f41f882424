"""Every public layer function's errors name the user's line.

Layers check their arguments before any op exists (so before an op's callsite
could be attached). Wrapping each public layer function once, at import,
appends ``called at file:line`` to a ValueError/TypeError raised inside it
unless the message already names a line; the exception keeps its type.
"""

from __future__ import annotations

import functools
import types
from collections.abc import Callable

from oar.errors import at_user_line

_MARKERS = ("created at ", "called at ")


def with_user_line(fn: Callable) -> Callable:
    if getattr(fn, "__oar_user_line__", False):
        return fn

    @functools.wraps(fn)
    def layer(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (ValueError, TypeError) as exc:
            msg = str(exc.args[0]) if exc.args else ""
            if not any(m in msg for m in _MARKERS):
                exc.args = (msg + at_user_line(),) + tuple(exc.args[1:])
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
