"""A bounded, program-owned cache for what an Executor derives from a Program.

A compiled plan references its program (through its block and ops), so a
cache that held plans itself would keep every program ever run alive: a
long-lived process running fresh programs would grow without end. Here the
*program* owns the cached values (a private dict on the program object, keyed
by cache), and the executor keeps only a bounded LRU index of the keys with a
weak reference per program:

- dropping a Program drops its plans with it (the index forgets its keys
  through a weakref callback);
- more than ``maxsize`` entries evicts the least recently used one from its
  program;
- closing or dropping the executor removes its entries from live programs.

Keys are tuples whose first item is ``id(program)``.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

_STORE = "_oar_plan_store"


class _Store(dict):
    """The per-program dict of cached values: a copied or pickled program starts with none."""

    __slots__ = ()

    def __copy__(self) -> _Store:
        return _Store()

    def __deepcopy__(self, memo: dict) -> _Store:
        return _Store()

    def __reduce__(self) -> tuple:
        return (_Store, ())


def default_size() -> int:
    """The default bound: ``OAR_PLAN_CACHE_SIZE`` from the environment, else 256 entries."""
    raw = os.environ.get("OAR_PLAN_CACHE_SIZE", "256")
    try:
        size = int(raw)
    except ValueError:
        raise ValueError(
            f"OAR_PLAN_CACHE_SIZE must be a positive number of cached plans, given {raw!r}"
        ) from None
    if size <= 0:
        raise ValueError(
            f"OAR_PLAN_CACHE_SIZE must be a positive number of cached plans, given {size}"
        )
    return size


class PlanCache:
    """LRU of ``key -> value`` where the value is stored on (and dies with) the key's program."""

    def __init__(self, maxsize: int | None = None) -> None:
        if maxsize is None:
            maxsize = default_size()
        if isinstance(maxsize, bool) or not isinstance(maxsize, int) or maxsize <= 0:
            raise ValueError(f"plan cache size must be a positive int, given {maxsize!r}")
        self.maxsize = maxsize
        self._index: OrderedDict = OrderedDict()  # key -> weakref to its program
        self._by_prog: dict = {}  # id(program) -> (weakref with callback, set of keys)
        self._dead: list = []  # ids of programs collected since the last mutation
        self._lock = threading.RLock()
        self._me = object()  # this cache's identity inside program stores
        self.evictions = 0

    # --- the hot path -------------------------------------------------------------------------
    def get(self, key: tuple, program: Any) -> Any:
        """The value stored for ``key`` on ``program``, or None; marks it recently used."""
        store = program.__dict__.get(_STORE)
        if store is None:
            return None
        value = store.get((self._me, key))
        if value is not None:
            try:
                self._index.move_to_end(key)
            except KeyError:  # evicted concurrently; the value is still good for this run
                pass
        return value

    def put(self, key: tuple, program: Any, value: Any) -> None:
        """Store ``value`` for ``key`` on ``program``, evicting the least recently used beyond maxsize."""
        with self._lock:
            self._purge()
            pid = id(program)
            entry = self._by_prog.get(pid)
            if entry is None or entry[0]() is not program:
                if entry is not None:  # a dead program's id reused before its callback ran
                    self._forget(pid)
                entry = self._by_prog[pid] = (weakref.ref(program, self._on_dead(pid)), set())
            store = program.__dict__.get(_STORE)
            if store is None:  # setdefault: executors in other threads may get here too
                store = program.__dict__.setdefault(_STORE, _Store())
            store[(self._me, key)] = value
            entry[1].add(key)
            self._index[key] = entry[0]
            self._index.move_to_end(key)
            while len(self._index) > self.maxsize:
                old, ref = self._index.popitem(last=False)
                self._drop(old, ref)
                self.evictions += 1

    # --- upkeep -------------------------------------------------------------------------------
    def _on_dead(self, pid: int) -> Any:
        dead = self._dead  # no reference to self: the callback must not keep the cache alive

        def callback(_ref: Any) -> None:
            dead.append(pid)  # list.append is atomic; mutations purge later (not inside GC)

        return callback

    def _purge(self) -> None:
        while self._dead:
            self._forget(self._dead.pop())

    def _forget(self, pid: int) -> None:
        entry = self._by_prog.pop(pid, None)
        if entry is None:
            return
        for key in entry[1]:
            if self._index.get(key) is entry[0]:
                del self._index[key]

    def _drop(self, key: tuple, ref: Any) -> None:
        program = ref()
        entry = self._by_prog.get(key[0])
        if entry is not None and entry[0] is ref:
            entry[1].discard(key)
            if not entry[1]:
                del self._by_prog[key[0]]
        if program is not None:
            store = program.__dict__.get(_STORE)
            if store is not None:
                store.pop((self._me, key), None)

    def clear(self) -> None:
        """Remove every entry (from the live programs too)."""
        with self._lock:
            self._purge()
            while self._index:
                key, ref = self._index.popitem()
                self._drop(key, ref)
            self._by_prog.clear()

    # --- a read-only mapping view (tests and tools) ---------------------------------------------
    def __len__(self) -> int:
        self._purge_quietly()
        return len(self._index)

    def __iter__(self) -> Iterator:
        self._purge_quietly()
        return iter(list(self._index))

    def __contains__(self, key: Any) -> bool:
        return self._lookup(key) is not None

    def __getitem__(self, key: tuple) -> Any:
        value = self._lookup(key)
        if value is None:
            raise KeyError(key)
        return value

    def items(self) -> list:
        out = []
        for key in self:
            value = self._lookup(key)
            if value is not None:
                out.append((key, value))
        return out

    def values(self) -> list:
        return [v for _, v in self.items()]

    def keys(self) -> list:
        return [k for k, _ in self.items()]

    def _lookup(self, key: Any) -> Any:
        ref = self._index.get(key)
        program = ref() if ref is not None else None
        if program is None:
            return None
        store = program.__dict__.get(_STORE) or {}
        return store.get((self._me, key))

    def _purge_quietly(self) -> None:
        if self._dead:
            with self._lock:
                self._purge()

    def __repr__(self) -> str:
        return f"<PlanCache {len(self)}/{self.maxsize} entries, {self.evictions} evicted>"
