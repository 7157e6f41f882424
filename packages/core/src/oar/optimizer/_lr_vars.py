"""An optimizer's learning-rate variable per program, holding no program alive.

Keyed by the program object (not ``id``, which a new program can reuse once the old one
is gone). A static program's lr Variable is kept by name and looked up in the program:
a Variable references its program, so holding it would keep every program the optimizer
ever minimized alive (measured: one SGD used on 200 fresh programs held all 200).
"""

from __future__ import annotations

import weakref
from typing import Any

from oar.framework.variable import Variable


class LearningRateVars:
    """``program -> lr variable`` for one optimizer; entries vanish with their program."""

    def __init__(self) -> None:
        self._entries: dict = {}  # id(program) -> (weakref to program, name or eager value)

    def __len__(self) -> int:
        return len(self._entries)

    def _drop(self, key: int, ref: Any) -> None:
        entry = self._entries.get(key)
        if entry is not None and entry[0] is ref:
            del self._entries[key]

    def get(self, program: Any) -> Any:
        entry = self._entries.get(id(program))
        if entry is None or entry[0]() is not program:
            return None
        value = entry[1]
        if isinstance(value, str):
            return program.global_block()._find_var_recursive(value)
        return value

    def __contains__(self, program: Any) -> bool:
        return self.get(program) is not None

    def set(self, program: Any, var: Any) -> None:
        """Remember ``var``: by name when it is a variable of ``program``, else the object."""
        key = id(program)
        ref = weakref.ref(program, lambda r, k=key: self._drop(k, r))
        owned = isinstance(var, Variable) and var.block.program is program
        self._entries[key] = (ref, var.name if owned else var)
