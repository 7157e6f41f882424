"""Parse a user function, convert its AST, compile it back with the user's file and line numbers.

The converted code keeps every original statement's line number and is compiled
under the user's file name, so tracebacks, ``user_site()`` callsites and error
messages raised while it runs point at the user's own lines.
"""

from __future__ import annotations

import ast
import inspect
import sys
import sysconfig
import textwrap
import types
import weakref
from typing import Any

from oar.dygraph.dygraph_to_static.errors import ConversionError
from oar.dygraph.dygraph_to_static.transform_control import ControlTransformer
from oar.dygraph.dygraph_to_static.transform_expr import JST, ExprTransformer

_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_SKIP_ROOTS = tuple(
    p
    for p in {sysconfig.get_paths().get(k) for k in ("stdlib", "purelib", "platlib")}
    | {sys.prefix, sys.base_prefix + "/lib"}
    if p
)


class Converted:
    """A converted function and its source (``get_code``)."""

    def __init__(self, func: Any, code: str) -> None:
        self.func = func
        self.code = code


def _own_dirs() -> tuple:
    import oar

    return tuple(str(p) for p in oar.__path__)


def is_user_function(func: Any) -> bool:
    """A Python function from user code (not oar, the standard library or installed packages)."""
    if not isinstance(func, types.FunctionType):
        return False
    filename = func.__code__.co_filename
    if filename.startswith("<") or func.__name__ == "<lambda>":
        return False
    if filename.startswith(_own_dirs()) or "/oar_" in filename.replace("\\", "/"):
        return False
    return not filename.startswith(_SKIP_ROOTS)


def convert(func: Any) -> Converted:
    """The converted form of the plain function ``func`` (cached per function object)."""
    hit = _CACHE.get(func)
    if hit is not None:
        return hit
    try:
        src = textwrap.dedent(inspect.getsource(func))
    except (OSError, TypeError) as exc:
        raise ConversionError(
            f"cannot convert {func.__qualname__}: its source is not available ({exc})",
            layer="declarative",
        ) from exc
    tree = ast.parse(src)
    fdef = tree.body[0]
    if not isinstance(fdef, ast.FunctionDef):
        raise ConversionError(
            f"cannot convert {func.__qualname__}: only `def` functions convert", layer="declarative"
        )
    ast.increment_lineno(tree, func.__code__.co_firstlineno - 1)
    fdef.decorator_list = []
    fdef.returns = None
    ExprTransformer(_locals(fdef)).visit(fdef)
    ControlTransformer(func).function(fdef)
    code = ast.unparse(fdef)
    result = Converted(_compile(func, fdef), code)
    _CACHE[func] = result
    return result


def _locals(fdef: ast.FunctionDef) -> set:
    from oar.dygraph.dygraph_to_static.analysis import stored_names

    a = fdef.args
    params = {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg] if x}
    declared = {
        n
        for node in ast.walk(fdef)
        if isinstance(node, (ast.Global, ast.Nonlocal))
        for n in node.names
    }
    return (stored_names(fdef.body) | params) - declared


def _compile(func: Any, fdef: ast.FunctionDef) -> Any:
    from oar.dygraph.dygraph_to_static import jst

    free = list(func.__code__.co_freevars)
    outer = ast.FunctionDef(
        name="_jst_outer",
        args=ast.arguments(
            posonlyargs=[],
            args=[ast.arg(arg=n) for n in [JST, *free]],
            vararg=None,
            kwonlyargs=[],
            kw_defaults=[],
            kwarg=None,
            defaults=[],
        ),
        body=[fdef, ast.Return(value=ast.Name(id=fdef.name, ctx=ast.Load()))],
        decorator_list=[],
    )
    ast.copy_location(outer, fdef)
    module = ast.Module(body=[outer], type_ignores=[])
    ast.fix_missing_locations(module)
    code = compile(module, func.__code__.co_filename, "exec")
    ns: dict = {}
    exec(code, ns)
    outer_fn = types.FunctionType(ns["_jst_outer"].__code__, func.__globals__, "_jst_outer")
    cells = [c.cell_contents for c in (func.__closure__ or ())]
    new = outer_fn(jst, *cells)
    new.__defaults__ = func.__defaults__
    new.__kwdefaults__ = func.__kwdefaults__
    new.__qualname__ = func.__qualname__
    new.__wrapped__ = func
    return new
