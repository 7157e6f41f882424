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


_generator = UniqueNameGenerator()


def generate(key: str) -> str:
    """``generate('fc') -> 'fc_0'``, then ``'fc_1'``..."""
    return _generator(key)


def generate_with_ignorable_key(key: str) -> str:
    return _generator(key)


def switch(new_generator: UniqueNameGenerator | None = None) -> UniqueNameGenerator:
    global _generator
    old = _generator
    _generator = new_generator if new_generator is not None else UniqueNameGenerator()
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
        switch(old)
