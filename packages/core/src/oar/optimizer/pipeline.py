"""PipelineOptimizer: Fluid 1.8's section-pipelined training wrapper.

The arguments are checked as Fluid describes them (``cut_list`` splits the program into
``len(cut_list) + 1`` sections, one place and one concurrency per section) and the wrapped
optimizer's update is appended. Deliberate difference (for now): oar runs the program as
one stage, so results equal the wrapped optimizer's and there is no stage overlap.
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
            sections = len(cut_list) + 1
        for arg, v in (("place_list", place_list), ("concurrency_list", concurrency_list)):
            if v is not None and sections is not None and len(v) != sections:
                raise ArgumentError(
                    "PipelineOptimizer",
                    f"{arg} must have one entry per section ({sections}), given {len(v)}",
                )
        for arg, v in (("queue_size", queue_size), ("sync_steps", sync_steps)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ArgumentError(
                    "PipelineOptimizer", f"{arg} must be a positive int, given {v!r}"
                )
        self._optimizer = optimizer
        self._cut_list, self._place_list = cut_list, place_list
        self._concurrency_list = concurrency_list
        self._queue_size, self._sync_steps = queue_size, sync_steps
        self._start_cpu_core_id = start_cpu_core_id

    def minimize(self, loss, startup_program=None, parameter_list=None, no_grad_set=None):
        return self._optimizer.minimize(loss, startup_program, parameter_list, no_grad_set)
