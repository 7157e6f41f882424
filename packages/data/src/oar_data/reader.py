"""``oar.reader``: the reader decorators, including those third-party plugins register.

Built-in decorators are importable from here directly; any name registered
through the ``oar_register_reader_decorators`` hook is found on attribute
access, so ``oar.reader.my_decorator`` works for a plugin's decorator too.
"""

from __future__ import annotations

from typing import Any

from oar_data.decorators import (  # noqa: F401
    ComposeNotAligned,
    buffered,
    cache,
    chain,
    compose,
    firstn,
    map_readers,
    multiprocess_reader,
    shuffle,
    xmap_readers,
)

# a package to the import system, so `import oar.reader.decorator` (Fluid's module path) works
__path__: list = []


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    from oar.api import registries

    reg = registries().reader_decorators
    if name in reg:
        return reg.get(name)
    raise AttributeError(
        f"module 'oar.reader' has no attribute '{name}' (reader decorators: {reg.names()})"
    )


def __dir__() -> list:
    from oar.api import registries

    return sorted(set(globals()) | set(registries().reader_decorators.names()))
