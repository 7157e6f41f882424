"""``if`` / ``while`` / ``for`` (with ``break`` / ``continue``) into ``_jst`` helper calls.

Top-down: a statement becomes nested functions (branches, loop condition and
body) that take and return the variables it changes and that the code around
it reads; their bodies are converted in turn, with the new function as scope.
"""

from __future__ import annotations

import ast
from typing import Any

from oar.dygraph.dygraph_to_static.analysis import (
    contains,
    first_loaded,
    loaded_names,
    outside,
    stored_names,
)
from oar.dygraph.dygraph_to_static.errors import unsupported
from oar.dygraph.dygraph_to_static.transform_expr import jst_call, thunk
from oar.dygraph.dygraph_to_static.transform_return import transform_returns


def _name(id_: str, store: bool = False) -> ast.Name:
    return ast.Name(id=id_, ctx=ast.Store() if store else ast.Load())


def _assign(target: str, value: ast.expr) -> ast.Assign:
    return ast.Assign(targets=[_name(target, True)], value=value)


def _tuple(names: list, store: bool = False) -> ast.Tuple:
    return ast.Tuple(
        elts=[_name(n, store) for n in names], ctx=ast.Store() if store else ast.Load()
    )


def _fn(name: str, params: list, body: list) -> ast.FunctionDef:
    args = ast.arguments(
        posonlyargs=[],
        args=[ast.arg(arg=p) for p in params],
        vararg=None,
        kwonlyargs=[],
        kw_defaults=[],
        kwarg=None,
        defaults=[],
    )
    return ast.FunctionDef(name=name, args=args, body=body or [ast.Pass()], decorator_list=[])


def _args_of(names: list) -> ast.Call:
    strs = ast.Tuple(elts=[ast.Constant(n) for n in names], ctx=ast.Load())
    return jst_call("get_args", [ast.Call(func=_name("locals"), args=[], keywords=[]), strs])


def _names_const(names: list) -> ast.Tuple:
    return ast.Tuple(elts=[ast.Constant(n) for n in names], ctx=ast.Load())


def _result(names: list, call: ast.Call) -> ast.stmt:
    if not names:
        return ast.Expr(value=call)
    return ast.Assign(targets=[_tuple(names, True)], value=call)


def _located(nodes: list, at: ast.AST) -> list:
    for n in nodes:
        ast.copy_location(n, at)
        for sub in ast.walk(n):
            if not hasattr(sub, "lineno") and "lineno" in sub._attributes:
                ast.copy_location(sub, at)
    return nodes


class ControlTransformer:
    """Converts the statements of one user function (``func`` names it in errors)."""

    def __init__(self, func: Any) -> None:
        self.func = func
        self.count = 0

    def _next(self) -> int:
        self.count += 1
        return self.count - 1

    def function(self, fdef: ast.FunctionDef) -> None:
        transform_returns(fdef, self.func)
        fdef.body = self.block(fdef.body, fdef)

    def block(self, stmts: list, scope: ast.FunctionDef) -> list:
        out: list = []
        for s in stmts:
            if isinstance(s, ast.If):
                out += self.if_(s, scope)
            elif isinstance(s, ast.While):
                out += self.while_(s, scope)
            elif isinstance(s, ast.For):
                out += self.for_(s, scope)
            elif isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.function(s)
                out.append(s)
            elif isinstance(s, ast.With):
                s.body = self.block(s.body, scope)
                out.append(s)
            elif isinstance(s, (ast.Break, ast.Continue)):
                raise unsupported("`break`/`continue` outside a loop", s, self.func)
            else:
                out.append(s)
        return out

    # --- if -------------------------------------------------------------------------------------
    def if_(self, node: ast.If, scope: ast.FunctionDef) -> list:
        loads, stores = outside(scope, node)
        names = sorted(stored_names(node.body + node.orelse) & (loads | stores))
        k = self._next()
        ret = ast.Return(value=_tuple(names))
        true_fn = _fn(f"_jst_true_fn_{k}", names, node.body + [ret])
        false_fn = _fn(f"_jst_false_fn_{k}", names, node.orelse + [ast.Return(value=_tuple(names))])
        call = jst_call(
            "convert_ifelse",
            [
                node.test,
                _name(true_fn.name),
                _name(false_fn.name),
                _args_of(names),
                _names_const(names),
            ],
        )
        new = _located([true_fn, false_fn, _result(names, call)], node)
        true_fn.body = self.block(true_fn.body, true_fn)
        false_fn.body = self.block(false_fn.body, false_fn)
        return new

    # --- while ----------------------------------------------------------------------------------
    def while_(self, node: ast.While, scope: ast.FunctionDef, jumps: bool = True) -> list:
        if node.orelse:
            raise unsupported("`while ... else`", node, self.func)
        pre: list = []
        if jumps:
            pre = self._jumps(node)
        loads, _ = outside(scope, node)
        carried = loaded_names([node.test]) | first_loaded(node.body) | loads
        names = sorted(stored_names(node.body) & carried)
        k = self._next()
        cond = _fn(f"_jst_while_cond_{k}", names, [ast.Return(value=node.test)])
        body = _fn(f"_jst_while_body_{k}", names, node.body + [ast.Return(value=_tuple(names))])
        call = jst_call(
            "convert_while_loop",
            [_name(cond.name), _name(body.name), _args_of(names), _names_const(names)],
        )
        new = _located(pre + [cond, body, _result(names, call)], node)
        body.body = self.block(body.body, body)
        return new

    def _jumps(self, node: Any) -> list:
        """Rewrite ``break``/``continue`` in ``node.body`` into flags; the statements to run first."""
        if not contains(node.body, (ast.Break, ast.Continue)):
            return []
        k = self._next()
        brk, cont = f"_jst_brk_{k}", f"_jst_cont_{k}"
        node.body = [_assign(cont, ast.Constant(False))] + self._rewrite(node.body, brk, cont)
        not_brk = jst_call("convert_logical_not", [_name(brk)])
        node.test = jst_call("convert_logical_and", [thunk(not_brk), thunk(node.test)])
        return [_assign(brk, ast.Constant(False))]

    def _rewrite(self, stmts: list, brk: str, cont: str) -> list:
        out: list = []
        for i, s in enumerate(stmts):
            if isinstance(s, (ast.Break, ast.Continue)):
                flag = brk if isinstance(s, ast.Break) else cont
                out.append(ast.copy_location(_assign(flag, ast.Constant(True)), s))
                return out
            if contains([s], (ast.Break, ast.Continue)):
                if isinstance(s, ast.If):
                    s.body = self._rewrite(s.body, brk, cont)
                    s.orelse = self._rewrite(s.orelse, brk, cont)
                elif isinstance(s, ast.With):
                    s.body = self._rewrite(s.body, brk, cont)
                else:
                    raise unsupported(
                        f"`break`/`continue` inside `{type(s).__name__.lower()}`", s, self.func
                    )
                out.append(s)
                rest = stmts[i + 1 :]
                if rest:
                    either = jst_call("convert_logical_or", [thunk(_name(brk)), thunk(_name(cont))])
                    guard = ast.If(
                        test=jst_call("convert_logical_not", [either]),
                        body=self._rewrite(rest, brk, cont),
                        orelse=[],
                    )
                    out.append(ast.copy_location(guard, rest[0]))
                return out
            out.append(s)
        return out

    # --- for ------------------------------------------------------------------------------------
    def for_(self, node: ast.For, scope: ast.FunctionDef) -> list:
        if node.orelse:
            raise unsupported("`for ... else`", node, self.func)
        k = self._next()
        it, end, step = f"_jst_it_{k}", f"_jst_end_{k}", f"_jst_step_{k}"
        iter_ = node.iter
        pre: list = []
        if (
            isinstance(iter_, ast.Call)
            and isinstance(iter_.func, ast.Name)
            and iter_.func.id == "range"
            and not iter_.keywords
        ):
            bounds: ast.expr = jst_call("range_args", iter_.args)
            item: ast.expr = _name(it)
        else:
            seq = f"_jst_seq_{k}"
            pre.append(_assign(seq, jst_call("convert_iter_seq", [iter_])))
            bounds = ast.Tuple(
                elts=[ast.Constant(0), jst_call("convert_len", [_name(seq)]), ast.Constant(1)],
                ctx=ast.Load(),
            )
            item = jst_call("convert_index", [_name(seq), _name(it)])
        pre.append(ast.Assign(targets=[_tuple([it, end, step], True)], value=bounds))
        loop = ast.While(
            test=jst_call("for_cond", [_name(it), _name(end), _name(step)]),
            body=node.body,
            orelse=[],
        )
        pre += self._jumps(loop)
        step_up = _assign(it, ast.BinOp(left=_name(it), op=ast.Add(), right=_name(step)))
        loop.body = [ast.Assign(targets=[node.target], value=item)] + loop.body + [step_up]
        _located(pre + [loop], node)
        return _located(pre, node) + self._while_in(loop, scope, node)

    def _while_in(self, loop: ast.While, scope: ast.FunctionDef, at: ast.For) -> list:
        # the generated loop must stand in the scope's body for the name analysis
        holder = _find_parent_list(scope, at)
        if holder is not None:
            holder[holder.index(at)] = loop
        return self.while_(loop, scope, jumps=False)


def _find_parent_list(scope: ast.AST, node: ast.AST) -> list | None:
    for n in ast.walk(scope):
        for field in ("body", "orelse", "finalbody"):
            lst = getattr(n, field, None)
            if isinstance(lst, list) and any(x is node for x in lst):
                return lst
    return None
