"""PipelineOptimizer: Fluid 1.8's section-pipelined training wrapper.

``minimize`` appends the wrapped optimizer's backward and update ops, then hands the
program's runs to a pipeline runner (``oar/optimizer/_pipeline_runner.py``): the forward
ops are cut into stages at the ``cut_list`` variables, or where ``device_guard`` changes
device; each stage runs its forward and backward sections in its own thread, with queues
between stages; a batch is split into ``num_microbatches`` micro-batches whose gradients
are averaged before the update runs once. With a mean loss the losses and parameters equal
the unpipelined run's. ``place_list``, ``concurrency_list``, ``queue_size``, ``sync_steps``
and ``start_cpu_core_id`` are checked and kept (every stage runs on the CPU, one thread
each). ``num_microbatches`` (keyword only) is an oar extension, named as in later Fluid.
"""

from __future__ import annotations

from typing import Any

from oar.errors import ArgumentError, ArgumentTypeError

__all__ = ["PipelineOptimizer"]


class PipelineOptimizer:
    def __init__(
        self,
        optimizer: Any,
        cut_list: Any = None,
        place_list: Any = None,
        concurrency_list: Any = None,
        queue_size: int = 30,
        sync_steps: int = 1,
        start_cpu_core_id: int = 0,
        *,
        num_microbatches: int = 1,
    ) -> None:
        from oar.optimizer.base import Optimizer

        if not isinstance(optimizer, Optimizer):
            raise ArgumentTypeError(
                "PipelineOptimizer",
                f"optimizer must be an optimizer, given {type(optimizer).__name__}",
            )
        sections = None
        if cut_list is not None:
            if not isinstance(cut_list, (list, tuple)) or not all(
                isinstance(c, (list, tuple)) for c in cut_list
            ):
                raise ArgumentTypeError(
                    "PipelineOptimizer",
                    f"cut_list must be a list of lists of Variables, given {cut_list!r}",
                )
            sections = 2 * len(cut_list) - 1 if cut_list else 1
        for arg, v in (("place_list", place_list), ("concurrency_list", concurrency_list)):
            if v is not None and sections is not None and len(v) != sections:
                raise ArgumentError(
                    "PipelineOptimizer",
                    f"{arg} must have one entry per section (2 * len(cut_list) - 1 = "
                    f"{sections}), given {len(v)}",
                )
        for arg, v in (
            ("queue_size", queue_size),
            ("sync_steps", sync_steps),
            ("num_microbatches", num_microbatches),
        ):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ArgumentError(
                    "PipelineOptimizer", f"{arg} must be a positive int, given {v!r}"
                )
        self._optimizer = optimizer
        self._cut_list, self._place_list = cut_list, place_list
        self._concurrency_list = concurrency_list
        self._queue_size, self._sync_steps = queue_size, sync_steps
        self._start_cpu_core_id = start_cpu_core_id
        self._num_microbatches = num_microbatches

    def minimize(self, loss, startup_program=None, parameter_list=None, no_grad_set=None):
        from oar.optimizer._pipeline_runner import PipelineRunner

        result = self._optimizer.minimize(loss, startup_program, parameter_list, no_grad_set)
        cuts = None
        if self._cut_list:
            cuts = [[getattr(v, "name", v) for v in cut] for cut in self._cut_list]
        program = loss.block.program
        program._oar_compiled = PipelineRunner(program, cuts, self._num_microbatches)
        return result
