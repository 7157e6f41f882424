"""Shared plumbing of ExponentialMovingAverage and ModelAverage: side programs and their guards."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from oar.framework.program import Program


def clone_var(block: Any, var: Any, persistable: bool = True) -> Any:
    """``var`` declared in ``block`` under the same name (values meet in the scope by name)."""
    if block.has_var(var.name):
        return block.var(var.name)
    return block.create_var(
        name=var.name, shape=var.shape, dtype=var.dtype, persistable=persistable, stop_gradient=True
    )


class AveragingBase:
    """``apply(executor, need_restore)`` swaps averaged values in; ``restore(executor)`` swaps them back."""

    apply_program: Program
    restore_program: Program

    @contextlib.contextmanager
    def apply(self, executor: Any, need_restore: bool = True) -> Iterator[None]:
        """Inside the ``with`` block the parameters hold their averages (restored after, if asked)."""
        executor.run(self.apply_program)
        try:
            yield
        finally:
            if need_restore:
                self.restore(executor)

    def restore(self, executor: Any) -> None:
        """Put back the parameter values saved by the last ``apply``."""
        executor.run(self.restore_program)
