"""Single-machine data parallel (``CompiledProgram.with_data_parallel``) and its program pass."""

from __future__ import annotations

from oar_dist.data_parallel.grad_allreduce import insert_grad_allreduce, param_grads
from oar_dist.data_parallel.runner import DataParallelRunner

__all__ = ["DataParallelRunner", "insert_grad_allreduce", "param_grads"]
