"""Scopes: hierarchical name -> value maps that hold a program's tensors between runs."""

from __future__ import annotations

import contextlib
import contextvars
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
        names = sorted(self._vars)
        shown = ", ".join(names[:8]) + (f", ... ({len(names) - 8} more)" if len(names) > 8 else "")
        return f"<Scope {len(names)} vars [{shown}], {len(self._kids)} kids>"


_global_scope = Scope()
# scope_guard's scope for the current thread (or task); None: the process-wide one
_guarded: contextvars.ContextVar = contextvars.ContextVar("oar_scope_guard", default=None)


def global_scope() -> Scope:
    """The scope executors use unless told otherwise.

    Inside ``scope_guard(s)`` that is ``s`` - for the thread (or asyncio task)
    that entered the guard only, so threads training side by side each keep
    their own scope. Elsewhere it is the process-wide default scope, shared by
    all threads, as in Fluid.
    """
    guarded = _guarded.get()
    return _global_scope if guarded is None else guarded


def _switch_scope(scope: Scope) -> Scope:
    """Replace the process-wide default scope (not a guard's); returns the old one."""
    global _global_scope
    old, _global_scope = _global_scope, scope
    return old


@contextlib.contextmanager
def scope_guard(scope: Scope) -> Iterator[None]:
    """Make ``scope`` the global scope inside the block, for the calling thread only.

    A context variable holds it: other threads keep theirs (a thread started
    inside the block starts with the process-wide default, as a new thread
    starts with an empty context).
    """
    if not isinstance(scope, Scope):
        raise TypeError(f"scope_guard takes a Scope, given {type(scope).__name__}")
    token = _guarded.set(scope)
    try:
        yield
    finally:
        _guarded.reset(token)
