"""``StaticRNN``: a recurrence over the first dim of its step inputs, built as a ``While`` loop.

The step block is the loop body: ``step_input(x)`` reads ``x[i]`` (a ``gather``
of row ``i``), memories are variables of the enclosing block that the body reads
and, at the end of each step, overwrites with ``update_memory``'s value, and
each ``step_output`` is written into a tensor array that is stacked into
``[seq_len, ...]`` after the loop. Gradients flow through the loop's grad block
(``while_grad``), so training a StaticRNN is back-propagation through time.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from oar.errors import ArgumentError, ArgumentTypeError, user_site
from oar.framework.program import default_main_program
from oar.layer_helper import check_variable
from oar.layers.control_flow import _append_block_op, in_parent_block

__all__ = ["StaticRNN"]


class StaticRNN:
    """Fluid's StaticRNN: ``with rnn.step(): ...`` then ``rnn()`` for the stacked outputs."""

    BEFORE_RNN_BLOCK, IN_RNN_BLOCK, AFTER_RNN_BLOCK = 0, 1, 2

    def __init__(self, name: str | None = None) -> None:
        from oar.framework.mode import current_builder

        if current_builder().eager:
            raise ArgumentError(
                "StaticRNN", "StaticRNN builds a static loop; use a Python loop in dygraph mode"
            )
        self.name = name
        self.status = StaticRNN.BEFORE_RNN_BLOCK
        self.seq_len: int | None = None
        self.memories: dict = {}  # memory var name -> updated var (or None)
        self.step_inputs: dict = {}  # inner step var name -> outer sequence var
        self.outputs: list = []  # (inner var, array)
        self.results: list = []

    def _check(self, what: str, inside: bool = True) -> None:
        now = self.status == StaticRNN.IN_RNN_BLOCK
        if now != inside:
            where = "inside" if inside else "outside"
            raise ArgumentError(
                "StaticRNN",
                f"{what} must be called {where} `with rnn.step():`",
                callsite=user_site(),
            )

    @contextlib.contextmanager
    def step(self) -> Iterator[None]:
        from oar.layers.compare import less_than
        from oar.layers.ranges import increment
        from oar.layers.tensor import assign, fill_constant
        from oar.layers.tensor_array import tensor_array_to_tensor

        if self.status != StaticRNN.BEFORE_RNN_BLOCK:
            raise ArgumentError(
                "StaticRNN", "step() can be entered only once", callsite=user_site()
            )
        program = default_main_program()
        self.program = program
        self.i = fill_constant([1], "int64", 0)
        self.i.stop_gradient = True
        self.status = StaticRNN.IN_RNN_BLOCK
        blk = program._create_block()
        try:
            yield
            if self.seq_len is None:
                raise ArgumentError(
                    "StaticRNN", "the step block has no step_input: nothing to iterate over",
                    callsite=user_site(),
                )  # fmt: skip
            for mem, new in self.memories.items():
                if new is None:
                    raise ArgumentError(
                        "StaticRNN",
                        f"memory '{mem}' is never updated: call rnn.update_memory(mem, new_value)",
                        callsite=user_site(),
                    )
                assign(new, blk._var_recursive(mem))
            increment(self.i, in_place=True)
            less_than(self.i, self.n, cond=self.cond)
        finally:
            program._rollback()
            self.status = StaticRNN.AFTER_RNN_BLOCK
        _append_block_op(
            program, blk, "while", {"Condition": [self.cond]}, "StepScopes", {"is_test": False}
        )
        for _inner, arr in self.outputs:
            out, _ = tensor_array_to_tensor(arr, axis=0, use_stack=True)
            self.results.append(out)

    def step_input(self, x: Any) -> Any:
        """Row ``t`` of ``x`` (shape ``[seq_len, ...]``) at step ``t``."""
        from oar.layers.compare import less_than
        from oar.layers.indexing import gather
        from oar.layers.reshape import reshape
        from oar.layers.tensor import fill_constant

        self._check("step_input")
        check_variable("StaticRNN.step_input", "x", x)
        shape = list(x.shape or ())
        if not shape or shape[0] <= 0:
            raise ArgumentTypeError(
                "StaticRNN",
                f"step_input needs a known sequence length (dim 0) in x, given shape {shape}",
                variable=x.name,
                callsite=user_site(),
            )
        if self.seq_len is None:
            self.seq_len = shape[0]
            with in_parent_block(self.program):
                self.n = fill_constant([1], "int64", self.seq_len)
                self.cond = less_than(self.i, self.n)
        elif self.seq_len != shape[0]:
            raise ArgumentError(
                "StaticRNN",
                f"step inputs must have the same sequence length; {x.name} has {shape[0]}, "
                f"an earlier one {self.seq_len}",
                callsite=user_site(),
            )
        row = gather(x, self.i)
        step = reshape(row, [d if d >= 0 else -1 for d in shape[1:]] or [1])
        self.step_inputs[step.name] = x
        return step

    def memory(
        self,
        init: Any = None,
        shape: Any = None,
        batch_ref: Any = None,
        init_value: float = 0.0,
        init_batch_dim_idx: int = 0,
        ref_batch_dim_idx: int = 1,
    ) -> Any:
        """A state carried between steps: ``init``, or ``shape`` filled with ``init_value`` whose
        batch dim comes from ``batch_ref``."""
        from oar.layers.tensor import assign, fill_constant_batch_size_like

        self._check("memory")
        with in_parent_block(self.program):
            if init is not None:
                check_variable("StaticRNN.memory", "init", init)
                mem = assign(init)
            else:
                if shape is None or batch_ref is None:
                    raise ArgumentError(
                        "StaticRNN",
                        "memory needs init, or shape and batch_ref",
                        callsite=user_site(),
                    )
                check_variable("StaticRNN.memory", "batch_ref", batch_ref)
                ref = self.step_inputs.get(batch_ref.name, batch_ref)
                mem = fill_constant_batch_size_like(
                    ref,
                    [int(d) for d in shape],
                    ref.dtype,
                    float(init_value),
                    input_dim_idx=ref_batch_dim_idx,
                    output_dim_idx=init_batch_dim_idx,
                )
                mem.stop_gradient = True  # a constant start: no gradient flows into batch_ref
        self.memories[mem.name] = None
        return mem

    def update_memory(self, mem: Any, var: Any) -> None:
        """At the end of each step, ``mem`` takes ``var``'s value."""
        self._check("update_memory")
        check_variable("StaticRNN.update_memory", "var", var)
        if getattr(mem, "name", None) not in self.memories:
            raise ArgumentError(
                "StaticRNN", "update_memory: mem must come from rnn.memory()", callsite=user_site()
            )
        self.memories[mem.name] = var

    def step_output(self, o: Any) -> None:
        """Collect ``o`` at every step; ``rnn()`` gives them stacked as ``[seq_len, ...]``."""
        from oar.layers.tensor_array import array_write, create_array

        self._check("step_output")
        check_variable("StaticRNN.step_output", "o", o)
        with in_parent_block(self.program):
            arr = create_array(o.dtype)
        array_write(o, self.i, array=arr)
        self.outputs.append((o, arr))

    def output(self, *outputs: Any) -> None:
        for o in outputs:
            self.step_output(o)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.status != StaticRNN.AFTER_RNN_BLOCK:
            raise ArgumentError(
                "StaticRNN", "rnn() gives the outputs after the `with rnn.step():` block"
            )
        if not self.results:
            raise ArgumentError("StaticRNN", "the step block has no step_output")
        return self.results[0] if len(self.results) == 1 else list(self.results)
