"""Dygraph-to-static: convert a dygraph function's Python control flow into a static program.

Module map: ``transform_expr`` / ``transform_control`` / ``transform_return``
(AST rewrites), ``analysis`` (which names a statement reads and writes),
``source`` (parse, convert, compile with the user's line numbers),
``convert_operators`` + ``call`` (the ``_jst`` helpers the converted code
calls), ``bridge`` (dygraph layers while a program is built),
``program_cache`` (one program per input signature, and its runs and
gradients), ``translator`` (``declarative``, ``ProgramTranslator``).
"""

from __future__ import annotations

from oar.dygraph.dygraph_to_static.errors import ConversionError
from oar.dygraph.dygraph_to_static.translator import (
    ProgramTranslator,
    StaticFunction,
    declarative,
    dygraph_to_static_func,
)

__all__ = [
    "ConversionError",
    "ProgramTranslator",
    "StaticFunction",
    "declarative",
    "dygraph_to_static_func",
]
