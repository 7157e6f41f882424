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
    """Rewrites expressions into ``_jst`` helper calls that decide at run time (tensor or not)."""

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
            # ``xs.append(v)``: a Python list stays a list
            return node
        node.func = ast.copy_location(jst_call("convert_call", [func]), func)
        return node
