"""Kernels of the control-flow family: ``is_empty``.

``while`` and ``conditional_block`` run sub-blocks and are executed by the
executor itself (``oar.executor.block_ops``), not by kernels.
"""

from __future__ import annotations

from oar_kernels_cpu.kernels import array_module, kernel

xp = array_module(__name__)


@kernel("is_empty")
def is_empty(inputs, attrs):
    return {"Out": xp.asarray([inputs["X"].size == 0])}
