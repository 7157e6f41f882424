"""``IfElse``: row-wise branches over a bool mask, built as two conditional blocks.

A mask with one value per sequence of a LoD input (rather than one per row) sends whole
sequences through a branch; the merged output then has the input's LoD, as in Fluid.

``input(x)`` splits ``x`` by the mask once, in the enclosing block
(``split_lod_tensor``); each branch is a ``conditional_block`` that runs on its
rows (possibly none); ``ie()`` merges the branches' outputs back in row order
(``merge_lod_tensor``). Gradients flow through the blocks' grad blocks and the
split / merge ops (each one the other's gradient).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from oar.errors import ArgumentError, ArgumentTypeError, user_site
from oar.framework.variable import Variable
from oar.layer_helper import LayerHelper, check_variable
from oar.layers.control_flow import _append_block_op, _eager, in_parent_block, sub_block

__all__ = ["IfElse"]


class IfElse:
    """Row-wise branches: rows of each ``input(x)`` where ``cond`` (bool, one per row, or one
    per sequence of a LoD input) holds go through the true block, the others through the
    false block; ``ie()`` merges the outputs back in row (sequence) order.

    ``with ie.true_block(): t = ie.input(x); ie.output(f(t))`` and the same for
    ``false_block``. Both branches run (on their rows, possibly none), as in Fluid.
    """

    OUT_IF_ELSE_BLOCKS, IN_IF_ELSE_TRUE_BLOCKS, IN_IF_ELSE_FALSE_BLOCKS = 0, 1, 2

    def __init__(self, cond: Any, name: str | None = None) -> None:
        if _eager():
            raise ArgumentError("IfElse", "IfElse builds static branches; use Python if in dygraph")
        if not isinstance(cond, Variable) or cond.dtype != "bool":
            raise ArgumentTypeError(
                "IfElse",
                f"cond must be a bool Variable (one value per row), given "
                f"{getattr(cond, 'dtype', type(cond).__name__)}",
                callsite=user_site(),
            )
        self.cond = cond
        self.name = name
        self.status = IfElse.OUT_IF_ELSE_BLOCKS
        self.splits: dict = {}  # input name -> (true part, false part)
        self.outs: dict = {True: None, False: None}
        self.program = cond.block.program

    def _branch(self) -> bool:
        if self.status == IfElse.OUT_IF_ELSE_BLOCKS:
            raise ArgumentError(
                "IfElse",
                "input()/output() must be called inside true_block() or false_block()",
                callsite=user_site(),
            )
        return self.status == IfElse.IN_IF_ELSE_TRUE_BLOCKS

    def input(self, x: Any) -> Any:
        """The rows of ``x`` that this branch gets."""
        branch = self._branch()
        check_variable("IfElse.input", "x", x)
        parts = self.splits.get(x.name)
        if parts is None:
            helper = LayerHelper("split_lod_tensor")
            with in_parent_block(self.program):
                t = helper.create_variable_for_type_inference(x.dtype)
                f = helper.create_variable_for_type_inference(x.dtype)
                helper.append_op(
                    "split_lod_tensor",
                    {"X": [x], "Mask": [self.cond]},
                    {"OutTrue": [t], "OutFalse": [f]},
                    {"level": 0},
                )
            parts = self.splits[x.name] = (t, f)
            self.first_input = getattr(self, "first_input", x)
        return parts[0] if branch else parts[1]

    def output(self, *outs: Any) -> None:
        """This branch's results (the same number in both branches)."""
        from oar.layers.tensor import assign

        branch = self._branch()
        if self.outs[branch] is not None:
            raise ArgumentError(
                "IfElse", "output() can be called once per block", callsite=user_site()
            )
        got = []
        for i, o in enumerate(outs):
            check_variable("IfElse.output", f"outs[{i}]", o)
            with in_parent_block(self.program):
                helper = LayerHelper("ifelse_output")
                v = helper.create_variable_for_type_inference(o.dtype)
            assign(o, v)
            got.append(v)
        self.outs[branch] = got

    @contextlib.contextmanager
    def _block(self, status: int) -> Iterator[None]:
        if self.status != IfElse.OUT_IF_ELSE_BLOCKS:
            raise ArgumentError(
                "IfElse", "blocks cannot be nested in one IfElse", callsite=user_site()
            )
        self.status = status
        with sub_block(self.program) as blk:
            try:
                yield
            finally:
                self.status = IfElse.OUT_IF_ELSE_BLOCKS
        _append_block_op(
            self.program, blk, "conditional_block", {"Cond": [self.cond]}, "Scope",
            {"is_scalar_condition": False},
        )  # fmt: skip

    def true_block(self):
        return self._block(IfElse.IN_IF_ELSE_TRUE_BLOCKS)

    def false_block(self):
        return self._block(IfElse.IN_IF_ELSE_FALSE_BLOCKS)

    def __call__(self) -> list:
        t, f = self.outs[True], self.outs[False]
        if t is None or f is None or len(t) != len(f):
            raise ArgumentError(
                "IfElse",
                f"both blocks must call output() with the same number of results; the true block "
                f"gave {None if t is None else len(t)}, the false block "
                f"{None if f is None else len(f)}",
                callsite=user_site(),
            )
        helper = LayerHelper("merge_lod_tensor")
        merged = []
        for a, b in zip(t, f):
            out = helper.create_variable_for_type_inference(a.dtype)
            helper.append_op(
                "merge_lod_tensor",
                {
                    "X": [getattr(self, "first_input", self.cond)],
                    "Mask": [self.cond],
                    "InTrue": [a],
                    "InFalse": [b],
                },
                {"Out": [out]},
                {"level": 0},
            )
            merged.append(out)
        return merged
