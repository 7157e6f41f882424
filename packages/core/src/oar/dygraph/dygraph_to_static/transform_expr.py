"""Expression rewrites: ``and``/``or``/``not``, ``x if c else y``, ``print``, ``len`` and calls."""

from __future__ import annotations

import ast
import builtins

JST = "_jst"
_BUILTINS = frozenset(dir(builtins))


def jst(name: str) -> ast.Attribute:
    return ast.Attribute(value=ast.Name(id=JST, ctx=ast.Load()), attr=name, ctx=ast.Load())


def jst_call(name: str, args: list) -> ast.Call:
    return ast.Call(func=jst(name), args=args, keywords=[])


def thunk(expr: ast.expr) -> ast.Lambda:
    no_args = ast.arguments(
        posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]
    )
    return ast.Lambda(args=no_args, body=expr)


def is_jst(func: ast.expr) -> bool:
    return (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Name)
        and func.value.id == JST
    )


class ExprTransformer(ast.NodeTransformer):
    """Rewrites expressions into ``_jst`` helper calls that decide at run time (tensor or not).

    ``local_names``: the function's own locals; ``xs.append(v)`` is rewritten only for those
    (assigning a global or closure name would make it local)."""

    def __init__(self, local_names: set) -> None:
        self.local_names = local_names

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.expr:
        self.generic_visit(node)
        helper = "convert_logical_and" if isinstance(node.op, ast.And) else "convert_logical_or"
        expr = node.values[-1]
        for value in reversed(node.values[:-1]):
            expr = jst_call(helper, [thunk(value), thunk(expr)])
        return ast.copy_location(expr, node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.expr:
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return ast.copy_location(jst_call("convert_logical_not", [node.operand]), node)
        return node

    def visit_IfExp(self, node: ast.IfExp) -> ast.expr:
        self.generic_visit(node)
        call = jst_call("convert_ifexp", [node.test, thunk(node.body), thunk(node.orelse)])
        return ast.copy_location(call, node)

    def visit_Expr(self, node: ast.Expr) -> ast.stmt:
        """``xs.append(v)`` -> ``xs = _jst.convert_append(xs, v)``: a list appended in a tensor
        loop is one of its loop variables (a tensor array there)."""
        self.generic_visit(node)
        call = node.value
        if (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr == "append"
            and isinstance(call.func.value, ast.Name)
            and call.func.value.id in self.local_names
            and len(call.args) == 1
            and not call.keywords
        ):
            name = call.func.value.id
            new = ast.Assign(
                targets=[ast.Name(id=name, ctx=ast.Store())],
                value=jst_call("convert_append", [ast.Name(id=name, ctx=ast.Load()), call.args[0]]),
            )
            return ast.copy_location(new, node)
        return node

    def visit_Call(self, node: ast.Call) -> ast.expr:
        self.generic_visit(node)
        func = node.func
        if is_jst(func):
            return node
        if isinstance(func, ast.Name) and func.id in ("print", "len"):
            node.func = ast.copy_location(jst("convert_" + func.id), func)
            return node
        if isinstance(func, ast.Name) and func.id in _BUILTINS:
            return node
        if isinstance(func, ast.Attribute) and func.attr == "append":
            return node  # a statement ``xs.append(v)`` is rewritten by visit_Expr
        node.func = ast.copy_location(jst_call("convert_call", [func]), func)
        return node
