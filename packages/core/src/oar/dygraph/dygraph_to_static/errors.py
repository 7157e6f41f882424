"""The error a construct that cannot be converted raises: names the function and the user's line."""

from __future__ import annotations

import ast
import linecache
from typing import Any

from oar.errors import OarError, user_site


class ConversionError(OarError, NotImplementedError):
    """Code under ``declarative`` that dygraph-to-static cannot convert."""


def unsupported(what: str, node: ast.AST, func: Any) -> ConversionError:
    """``what`` at ``node`` (original line numbers) in ``func`` is not supported."""
    filename = func.__code__.co_filename
    lineno = getattr(node, "lineno", func.__code__.co_firstlineno)
    text = linecache.getline(filename, lineno)
    return ConversionError(
        f"cannot convert {func.__qualname__}: {what}",
        layer="declarative",
        callsite=(filename, lineno, func.__name__, text.strip()),
    )


def runtime_error(message: str) -> OarError:
    """An error found while the converted code runs, at the user's line being run."""
    from oar.errors import ArgumentError

    return ArgumentError("declarative", message, callsite=user_site())
