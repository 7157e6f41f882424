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

__all__ = ["StaticRNN", "DynamicRNN"]


def _outside_step(layer: str, init: Any, program: Any) -> None:
    """A memory's initial value is read before the first step: it must not be built inside
    the step block."""
    if getattr(init, "block", None) is program.current_block():
        raise ArgumentError(
            layer,
            f"memory(init=...) needs a variable built before the step block; '{init.name}' is "
            f"computed inside it (create it before `with rnn.step():` / `rnn.block():`)",
            variable=init.name,
            callsite=user_site(),
        )


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
        _outside_step("StaticRNN", init, self.program)
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
                # a constant start (no gradient flows into batch_ref), carried in a variable
                # that does take gradients (the steps' parameters need them)
                mem.stop_gradient = True
                mem = assign(mem)
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


class DynamicRNN:
    """Fluid's DynamicRNN: a recurrence over LoD sequences of different lengths.

    ``step_input(x)`` gives, at step ``t``, the rows of the sequences longer than ``t``
    (longest first); memories shrink with them; ``rnn()`` gives the step outputs as a LoD
    tensor in the input's order. Built as a ``While`` loop over a rank table
    (``lod_rank_table``, ``lod_tensor_to_array``, ``shrink_memory``, ``array_to_lod_tensor``).
    """

    BEFORE_RNN, IN_RNN, AFTER_RNN = 0, 1, 2

    def __init__(self, name: str | None = None) -> None:
        from oar.framework.mode import current_builder

        if current_builder().eager:
            raise ArgumentError(
                "DynamicRNN", "DynamicRNN builds a static loop; use a Python loop in dygraph mode"
            )
        self.name = name
        self.status = DynamicRNN.BEFORE_RNN
        self.table = None
        self.memories: dict = {}
        self.outputs: list = []
        self.results: list = []

    def _inside(self, what: str) -> None:
        if self.status != DynamicRNN.IN_RNN:
            raise ArgumentError(
                "DynamicRNN",
                f"{what} must be called inside `with rnn.block():`",
                callsite=user_site(),
            )

    @contextlib.contextmanager
    def block(self) -> Iterator[None]:
        from oar.layers.compare import less_than
        from oar.layers.lod_rank import array_to_lod_tensor
        from oar.layers.ranges import increment
        from oar.layers.tensor import assign, fill_constant

        if self.status != DynamicRNN.BEFORE_RNN:
            raise ArgumentError(
                "DynamicRNN", "block() can be entered only once", callsite=user_site()
            )
        program = default_main_program()
        self.program = program
        self.i = fill_constant([1], "int64", 0)
        self.i.stop_gradient = True
        self.status = DynamicRNN.IN_RNN
        blk = program._create_block()
        try:
            yield
            if self.table is None:
                raise ArgumentError(
                    "DynamicRNN", "the block has no step_input: nothing to iterate over",
                    callsite=user_site(),
                )  # fmt: skip
            for mem, new in self.memories.items():
                if new is None:
                    raise ArgumentError(
                        "DynamicRNN",
                        f"memory '{mem}' is never updated: call rnn.update_memory(mem, new)",
                        callsite=user_site(),
                    )
                assign(new, blk._var_recursive(mem))
            increment(self.i, in_place=True)
            less_than(self.i, self.max_len, cond=self.cond)
        finally:
            program._rollback()
            self.status = DynamicRNN.AFTER_RNN
        _append_block_op(
            program, blk, "while", {"Condition": [self.cond]}, "StepScopes", {"is_test": False}
        )
        for _o, arr in self.outputs:
            self.results.append(array_to_lod_tensor(arr, self.table))

    def step_input(self, x: Any, level: int = 0) -> Any:
        """At step ``t``, the rows ``t`` of the sequences longer than ``t`` (longest first)."""
        from oar.layers.compare import less_than
        from oar.layers.lod_rank import lod_rank_table, lod_tensor_to_array, max_sequence_len
        from oar.layers.tensor_array import array_read

        self._inside("step_input")
        check_variable("DynamicRNN.step_input", "x", x)
        if not x.lod_level:
            raise ArgumentTypeError(
                "DynamicRNN",
                f"step_input needs a sequence (LoD) input, given '{x.name}' with lod_level 0",
                variable=x.name,
                callsite=user_site(),
            )
        with in_parent_block(self.program):
            if self.table is None:
                self.table = lod_rank_table(x, level)
                self.max_len = max_sequence_len(self.table)
                self.cond = less_than(self.i, self.max_len)
            arr = lod_tensor_to_array(x, self.table)
        self.first_array = getattr(self, "first_array", arr)
        return array_read(arr, self.i)

    def static_input(self, x: Any) -> Any:
        """``x`` (one row per sequence) in rank order, shrunk with the running sequences."""
        from oar.layers.lod_rank import reorder_lod_tensor_by_rank, shrink_memory

        self._inside("static_input")
        if self.table is None:
            raise ArgumentError(
                "DynamicRNN", "static_input must follow a step_input", callsite=user_site()
            )
        with in_parent_block(self.program):
            ordered = reorder_lod_tensor_by_rank(x, self.table)
        return shrink_memory(ordered, self.i, self.table)

    def memory(
        self,
        init: Any = None,
        shape: Any = None,
        value: float = 0.0,
        need_reorder: bool = False,
        dtype: Any = "float32",
    ) -> Any:
        """A state per running sequence: ``init`` (one row per sequence), or ``shape`` filled
        with ``value``; shrinks as sequences end."""
        from oar.layers.lod_rank import reorder_lod_tensor_by_rank, shrink_memory
        from oar.layers.tensor import assign, fill_constant_batch_size_like
        from oar.layers.tensor_array import array_read

        self._inside("memory")
        if self.table is None:
            raise ArgumentError(
                "DynamicRNN", "memory must follow a step_input", callsite=user_site()
            )
        _outside_step("DynamicRNN", init, self.program)
        with in_parent_block(self.program):
            if init is not None:
                check_variable("DynamicRNN.memory", "init", init)
                mem = assign(reorder_lod_tensor_by_rank(init, self.table) if need_reorder else init)
            else:
                if shape is None:
                    raise ArgumentError(
                        "DynamicRNN", "memory needs init or shape", callsite=user_site()
                    )
                first = array_read(self.first_array, self._zero())  # step 0's rows
                if first.lod_level:  # steps of a nested sequence: one row per sequence
                    from oar.layers.sequence_pool import sequence_first_step

                    first = sequence_first_step(first)
                mem = fill_constant_batch_size_like(
                    first, [-1] + [int(d) for d in shape], dtype, value
                )
                mem.stop_gradient = True  # a constant start, carried in a copy (see StaticRNN)
                mem = assign(mem)
        pre = shrink_memory(mem, self.i, self.table)
        self.memories[mem.name] = None
        self._pre = getattr(self, "_pre", {})
        self._pre[pre.name] = mem.name
        return pre

    def _zero(self) -> Any:
        from oar.layers.tensor import fill_constant

        z = fill_constant([1], "int64", 0)
        z.stop_gradient = True
        return z

    def update_memory(self, ex_mem: Any, new_mem: Any) -> None:
        self._inside("update_memory")
        mem = getattr(self, "_pre", {}).get(getattr(ex_mem, "name", None))
        if mem is None:
            raise ArgumentError(
                "DynamicRNN",
                "update_memory: ex_mem must come from rnn.memory()",
                callsite=user_site(),
            )
        check_variable("DynamicRNN.update_memory", "new_mem", new_mem)
        self.memories[mem] = new_mem

    def output(self, *outputs: Any) -> None:
        from oar.layers.tensor_array import array_write, create_array

        self._inside("output")
        for o in outputs:
            check_variable("DynamicRNN.output", "o", o)
            with in_parent_block(self.program):
                arr = create_array(o.dtype)
            array_write(o, self.i, array=arr)
            self.outputs.append((o, arr))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.status != DynamicRNN.AFTER_RNN:
            raise ArgumentError("DynamicRNN", "rnn() gives the outputs after `with rnn.block():`")
        if not self.results:
            raise ArgumentError("DynamicRNN", "the block has no output()")
        return self.results[0] if len(self.results) == 1 else list(self.results)
