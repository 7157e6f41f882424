"""Which names a piece of code reads and writes: what converted branches and loops carry."""

from __future__ import annotations

import ast

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _walk_same_scope(nodes: list) -> list:
    """Every node under ``nodes``, not entering nested functions (their names count, bodies not)."""
    out = []
    stack = list(reversed(nodes))
    while stack:
        node = stack.pop()
        out.append(node)
        if isinstance(node, _SCOPES):
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(node))))
    return out


def stored_names(stmts: list) -> set:
    """Names bound by ``stmts`` in their own scope."""
    names = set()
    for node in _walk_same_scope(stmts):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                names.add((a.asname or a.name).split(".")[0])
    return names


def loaded_names(nodes: list) -> set:
    """Names read anywhere under ``nodes``, nested functions included (closures read them)."""
    return {
        n.id
        for node in nodes
        for n in ast.walk(node)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    }


def first_loaded(stmts: list) -> set:
    """Names whose first use in ``stmts`` (in execution order) may be a read: loop-carried."""
    walker = _FirstUse()
    for s in stmts:
        walker.visit(s)
    return walker.first_load


class _FirstUse:
    """Walks statements in execution order, noting names first met as reads."""

    def __init__(self) -> None:
        self.seen: set = set()
        self.first_load: set = set()

    def _meet(self, name: str, load: bool) -> None:
        if name not in self.seen:
            self.seen.add(name)
            if load:
                self.first_load.add(name)

    def visit(self, node: ast.AST) -> None:
        if isinstance(node, ast.Name):
            self._meet(node.id, isinstance(node.ctx, ast.Load))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            if node.value is not None:
                self.visit(node.value)
            for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                self.visit(t)
        elif isinstance(node, ast.AugAssign):
            if isinstance(node.target, ast.Name):
                self._meet(node.target.id, True)
            self.visit(node.value)
        elif isinstance(node, (ast.If, ast.While)):
            self._branches(node)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            for n in loaded_names([node]):
                self._meet(n, True)
            if not isinstance(node, ast.Lambda):
                self.seen.add(node.name)
        else:
            for child in ast.iter_child_nodes(node):
                self.visit(child)

    def _branches(self, node: ast.If | ast.While) -> None:
        self.visit(node.test)
        before = set(self.seen)
        for s in node.body:
            self.visit(s)
        after_body = set(self.seen)
        self.seen = set(before)
        for s in node.orelse:
            self.visit(s)
        # a name bound in one branch only may still be unbound after the statement
        self.seen = (self.seen & after_body) | before


def outside(scope: ast.AST, node: ast.AST) -> tuple:
    """(names read, names bound) in ``scope`` outside ``node``'s subtree."""
    loads: set = set()
    stores: set = set()

    def visit(n: ast.AST, nested: bool) -> None:
        if n is node:
            return
        if isinstance(n, ast.Name):
            if isinstance(n.ctx, ast.Load):
                loads.add(n.id)
            elif not nested:
                stores.add(n.id)
            return
        if n is not scope and isinstance(n, _SCOPES):
            nested = True
        for c in ast.iter_child_nodes(n):
            visit(c, nested)

    for s in scope.body:
        visit(s, False)
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        a = scope.args
        for arg in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg]:
            if arg is not None:
                stores.add(arg.arg)
    return loads, stores


def contains(stmts: list, kinds: tuple) -> bool:
    """Whether ``stmts`` hold a ``kinds`` node outside nested functions and loops."""
    stack = list(stmts)
    while stack:
        n = stack.pop()
        if isinstance(n, kinds):
            return True
        if isinstance(n, _SCOPES) or isinstance(n, (ast.For, ast.While)):
            continue
        stack.extend(ast.iter_child_nodes(n))
    return False
