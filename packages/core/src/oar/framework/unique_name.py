"""Unique variable names per prefix, and ``guard()`` to restart the counters.

Restarting the counters is how two programs built by the same function get
the same parameter names, and so share parameters through the scope.
"""

from __future__ import annotations

import contextlib
from collections import defaultdict
from collections.abc import Iterator


class UniqueNameGenerator:
    def __init__(self, prefix: str = ""):
        self.prefix = prefix
        self.ids: defaultdict = defaultdict(int)

    def __call__(self, key: str) -> str:
        n = self.ids[key]
        self.ids[key] += 1
        return f"{self.prefix}{key}_{n}"


class DygraphParameterNameChecker:
    """The parameter names dygraph layers have used (``name in checker``)."""

    def __init__(self) -> None:
        self._names: set = set()

    def __call__(self, name: str) -> bool:
        """True if ``name`` was seen before; records it."""
        seen = name in self._names
        self._names.add(name)
        return seen

    def __contains__(self, name: object) -> bool:
        return name in self._names


_generator = UniqueNameGenerator()
_checker = DygraphParameterNameChecker()


def generate(key: str) -> str:
    """``generate('fc') -> 'fc_0'``, then ``'fc_1'``..."""
    return _generator(key)


def generate_with_ignorable_key(key: str) -> str:
    return _generator(key)


def switch(
    new_generator: UniqueNameGenerator | None = None,
    new_para_name_checker: DygraphParameterNameChecker | None = None,
) -> tuple:
    """Install a generator (and parameter-name checker), fresh ones by default.

    Returns ``(old_generator, old_checker)`` as Fluid 1.8 does, so
    ``switch(*old)`` restores both.
    """
    global _generator, _checker
    old = (_generator, _checker)
    _generator = new_generator if new_generator is not None else UniqueNameGenerator()
    _checker = (
        new_para_name_checker
        if new_para_name_checker is not None
        else DygraphParameterNameChecker()
    )
    return old


@contextlib.contextmanager
def guard(new_generator: str | UniqueNameGenerator | None = None) -> Iterator[None]:
    """Use fresh counters inside the block (optionally with a name prefix)."""
    if isinstance(new_generator, str):
        new_generator = UniqueNameGenerator(new_generator)
    elif isinstance(new_generator, bytes):
        new_generator = UniqueNameGenerator(new_generator.decode())
    old = switch(new_generator)
    try:
        yield
    finally:
        switch(*old)
