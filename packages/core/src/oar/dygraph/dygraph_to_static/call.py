"""``convert_call``: calls into user functions and layers convert too (recursively)."""

from __future__ import annotations

import types
from typing import Any

from oar.dygraph.dygraph_to_static.source import convert, is_user_function
from oar.dygraph.dygraph_to_static.tensor_list import array_aware


def _unwrap_static(func: Any) -> Any:
    from oar.dygraph.dygraph_to_static.translator import StaticFunction

    if isinstance(func, StaticFunction):
        return func.dygraph_function
    return func


def convert_call(func: Any) -> Any:
    """The callable the converted code calls in place of ``func``."""
    from oar.dygraph.dygraph_to_static.translator import StaticFunction

    if isinstance(func, StaticFunction):
        plain = func.dygraph_function
        conv = convert(plain).func
        if func.instance is not None:
            return types.MethodType(conv, func.instance)
        return conv
    if isinstance(func, types.MethodType):
        inner = func.__func__
        if is_user_function(inner):
            return types.MethodType(convert(inner).func, func.__self__)
        return func
    if is_user_function(func):
        return convert(func).func
    return array_aware(func)


def converted_forward(layer: Any) -> Any:
    """``layer.forward`` converted, bound to ``layer``."""
    forward = type(layer).forward
    for klass in type(layer).__mro__:
        if "forward" in klass.__dict__:
            forward = _unwrap_static(klass.__dict__["forward"])
            break
    if is_user_function(forward):
        return types.MethodType(convert(forward).func, layer)
    return types.MethodType(forward, layer)
