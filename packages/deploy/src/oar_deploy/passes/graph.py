"""What every inference pass needs: the pass context and small graph queries over one block."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
import numpy as np


@attrs.define
class PassContext:
    """The program being optimised, the scope holding its parameters, and its interface.

    ``feeds`` and ``fetches`` are variable names a pass must keep (they are the
    predictor's inputs and outputs). ``stats`` collects ``{pass name: rewrites}``.
    """

    program: Any
    scope: Any
    feeds: list
    fetches: list
    stats: dict = attrs.field(factory=dict)

    @property
    def block(self) -> Any:
        return self.program.global_block()

    def kept(self) -> set:
        return set(self.feeds) | set(self.fetches)

    def consumers(self) -> dict:
        """Variable name -> the ops (in order) that read it."""
        out: dict = {}
        for op in self.block.ops:
            for n in op.input_arg_names:
                out.setdefault(n, []).append(op)
        return out

    def only_consumer(self, name: str, consumers: dict) -> Any:
        """The single op reading ``name`` (a temporary nobody else sees), or None."""
        readers = consumers.get(name, [])
        if len(readers) != 1 or name in self.kept() or self.is_persistable(name):
            return None
        return readers[0]

    def is_persistable(self, name: str) -> bool:
        var = self.block._find_var_recursive(name)
        return bool(var is not None and var.persistable)

    def param(self, name: str) -> np.ndarray | None:
        """The array of persistable ``name`` in the scope (None if it is not a loaded parameter)."""
        if not self.is_persistable(name):
            return None
        sv = self.scope.find_var(name)
        if sv is None or not sv.is_initialized():
            return None
        return np.asarray(sv.get_tensor())

    def new_param(self, base: str, array: np.ndarray) -> str:
        """A new persistable variable holding ``array`` (the original stays as it was)."""
        block = self.block
        i = 0
        name = f"{base}@folded"
        while block._find_var_recursive(name) is not None or self.scope.find_var(name):
            i += 1
            name = f"{base}@folded_{i}"
        block.create_var(
            name=name, shape=list(array.shape), dtype=str(array.dtype), persistable=True
        )
        self.scope.var(name).get_tensor().set(np.ascontiguousarray(array))
        return name

    def remove_ops(self, ops: list) -> None:
        dead = {id(op) for op in ops}
        block = self.block
        keep = [op for op in block.ops if id(op) not in dead]
        if len(keep) != len(block.ops):
            block._remove_op(0, len(block.ops))
            block.ops.extend(keep)
            self.program._bump()

    def rename_input_everywhere(self, old: str, new: str) -> None:
        for op in self.block.ops:
            if old in op.input_arg_names:
                op._rename_input(old, new)

    def replace_op(self, old_ops: list, type: str, inputs: dict, outputs: dict, attrs: dict):
        """Put a new op where ``old_ops[0]`` was and drop ``old_ops`` (shapes already known)."""
        block = self.block
        index = block.ops.index(old_ops[0])
        op = block._insert_op(
            index,
            type,
            inputs=inputs,
            outputs=outputs,
            attrs=attrs,
            infer=False,
            callsite=old_ops[0].callsite,
        )
        self.remove_ops(old_ops)
        return op


def var_ndim(ctx: PassContext, name: str) -> int | None:
    var = ctx.block._find_var_recursive(name)
    shape = getattr(var, "shape", None)
    return None if shape is None else len(shape)


def first_match(ctx: PassContext, match: Callable[[Any, dict], Any]) -> Any:
    """The first op for which ``match(op, consumers)`` returns something (rewrites one at a time)."""
    consumers = ctx.consumers()
    for op in list(ctx.block.ops):
        found = match(op, consumers)
        if found is not None:
            return found
    return None


def rewrite_all(ctx: PassContext, match: Callable, rewrite: Callable) -> int:
    """Apply ``rewrite(found)`` until ``match`` finds nothing; returns the number of rewrites."""
    n = 0
    while True:
        found = first_match(ctx, match)
        if found is None:
            return n
        rewrite(found)
        n += 1
