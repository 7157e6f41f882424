"""``return`` inside ``if`` branches: every path ends in an assignment to ``_jst_ret``.

The statements after an ``if`` whose branch returns move into the branch that
does not return, so each path of the ``if`` tree computes the whole rest of the
function; the function then returns ``_jst_ret`` once, after the ``if``, and
the ``if`` can become a ``layers.cond`` that outputs the return value.
"""

from __future__ import annotations

import ast
import copy
from typing import Any

from oar.dygraph.dygraph_to_static.analysis import _walk_same_scope, contains
from oar.dygraph.dygraph_to_static.errors import unsupported

RET = "_jst_ret"


def _always_returns(stmts: list) -> bool:
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, (ast.Return, ast.Raise)):
        return True
    if isinstance(last, ast.If):
        return _always_returns(last.body) and _always_returns(last.orelse)
    return False


def _check_loops(stmts: list, func: Any) -> None:
    for node in _walk_same_scope(stmts):
        if isinstance(node, (ast.For, ast.While)):
            for inner in _walk_same_scope(node.body + node.orelse):
                if isinstance(inner, ast.Return):
                    raise unsupported(
                        "`return` inside a loop; assign the result to a variable and "
                        "return it after the loop",
                        inner,
                        func,
                    )


def _lift(stmts: list) -> list:
    for i, s in enumerate(stmts):
        if isinstance(s, ast.If) and contains([s], (ast.Return,)):
            rest = stmts[i + 1 :]
            if not _always_returns(s.body):
                s.body = s.body + copy.deepcopy(rest)
            if not _always_returns(s.orelse):
                s.orelse = s.orelse + copy.deepcopy(rest)
            s.body = _lift(s.body)
            s.orelse = _lift(s.orelse)
            return stmts[:i] + [s]
    return stmts


def _assign_returns(stmts: list, at: ast.AST, pad: bool = True) -> list:
    returns = _always_returns(stmts)
    out = []
    for s in stmts:
        if isinstance(s, ast.Return):
            value = s.value if s.value is not None else ast.Constant(value=None)
            assign = ast.Assign(targets=[ast.Name(id=RET, ctx=ast.Store())], value=value)
            out.append(ast.copy_location(assign, s))
            return out
        if isinstance(s, ast.If):
            s.body = _assign_returns(s.body, s)
            s.orelse = _assign_returns(s.orelse, s)
        out.append(s)
    if pad and not returns:
        none = ast.Assign(targets=[ast.Name(id=RET, ctx=ast.Store())], value=ast.Constant(None))
        out.append(ast.copy_location(none, out[-1] if out else at))
    return out


def transform_returns(fdef: ast.FunctionDef, func: Any) -> None:
    """Rewrite ``fdef``'s body in place when an ``if`` holds a ``return``."""
    _check_loops(fdef.body, func)
    body = _lift(fdef.body)
    last = body[-1] if body else None
    if isinstance(last, ast.If) and contains([last], (ast.Return,)):
        body[-1:] = _assign_returns([last], last, pad=False)
        ret = ast.Return(value=ast.Name(id=RET, ctx=ast.Load()))
        body.append(ast.copy_location(ret, last))
    fdef.body = body
