"""Scopes: hierarchical name -> value maps that hold a program's tensors between runs."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from oar.lod_tensor import LoDTensor, SelectedRows


class ScopeVariable:
    """A value slot in a scope (Fluid's ``core.Variable``)."""

    __slots__ = ("name", "value")

    def __init__(self, name: str, value: Any = None) -> None:
        self.name = name
        self.value = value

    def get_tensor(self) -> LoDTensor:
        if self.value is None:
            self.value = LoDTensor()
        if not isinstance(self.value, LoDTensor):
            raise TypeError(
                f"variable '{self.name}' holds a {type(self.value).__name__}, not a LoDTensor"
            )
        return self.value

    def get_selected_rows(self) -> SelectedRows:
        if self.value is None:
            self.value = SelectedRows()
        if not isinstance(self.value, SelectedRows):
            raise TypeError(
                f"variable '{self.name}' holds a {type(self.value).__name__}, not SelectedRows"
            )
        return self.value

    def is_initialized(self) -> bool:
        v = self.value
        return v is not None and (not isinstance(v, LoDTensor) or v._array is not None)

    def __repr__(self) -> str:
        return f"<ScopeVariable {self.name}: {self.value!r}>"


class Scope:
    """Name -> :class:`ScopeVariable`; lookups fall back to the parent scope."""

    def __init__(self, parent: Scope | None = None) -> None:
        self._vars: dict = {}
        self._parent = parent
        self._kids: list = []

    def var(self, name: str) -> ScopeVariable:
        """The variable ``name`` in this scope, created if missing."""
        v = self._vars.get(name)
        if v is None:
            v = self._vars[name] = ScopeVariable(name)
        return v

    def find_var(self, name: str) -> ScopeVariable | None:
        s: Scope | None = self
        while s is not None:
            v = s._vars.get(name)
            if v is not None:
                return v
            s = s._parent
        return None

    def find_local_var(self, name: str) -> ScopeVariable | None:
        return self._vars.get(name)

    def new_scope(self) -> Scope:
        kid = Scope(self)
        self._kids.append(kid)
        return kid

    def drop_kids(self) -> None:
        self._kids.clear()

    def parent(self) -> Scope | None:
        return self._parent

    def local_var_names(self) -> list:
        return list(self._vars)

    def erase(self, names: list) -> None:
        for n in names:
            self._vars.pop(n, None)

    def __contains__(self, name: str) -> bool:
        return self.find_var(name) is not None

    def __repr__(self) -> str:
        return f"<Scope {len(self._vars)} vars, {len(self._kids)} kids>"


_global_scope = Scope()


def global_scope() -> Scope:
    """The scope executors use unless told otherwise."""
    return _global_scope


def _switch_scope(scope: Scope) -> Scope:
    global _global_scope
    old, _global_scope = _global_scope, scope
    return old


@contextlib.contextmanager
def scope_guard(scope: Scope) -> Iterator[None]:
    """Make ``scope`` the global scope inside the block."""
    if not isinstance(scope, Scope):
        raise TypeError(f"scope_guard takes a Scope, given {type(scope).__name__}")
    old = _switch_scope(scope)
    try:
        yield
    finally:
        _switch_scope(old)
