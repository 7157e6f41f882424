"""CompiledProgram and ParallelExecutor for single-machine data parallelism.

On the CPU, oar runs a data-parallel step as one step over the whole batch:
with the mean losses Fluid models use and equal per-place shares, the
gradient is the same as averaging per-place gradients, and one large numpy
call beats several small ones. A list of per-place feeds is concatenated
along the batch dim. Fetched values are returned as one merged result, as
Fluid's ``return_merged=True`` does.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import numpy as np

from oar.framework.program import Program
from oar.lod_tensor import LoDTensor


@attrs.define
class BuildStrategy:
    """Accepted for compatibility; oar's executor needs none of these knobs."""

    reduce_strategy: int = 0
    gradient_scale_strategy: int = 0
    fuse_all_reduce_ops: bool = False
    fuse_elewise_add_act_ops: bool = False
    fuse_relu_depthwise_conv: bool = False
    fuse_broadcast_ops: bool = False
    enable_inplace: bool = True
    memory_optimize: bool = True
    sync_batch_norm: bool = False
    num_trainers: int = 1
    trainer_id: int = 0
    debug_graphviz_path: str = ""

    class ReduceStrategy:
        AllReduce = 0
        Reduce = 1

    class GradientScaleStrategy:
        CoeffNumDevice = 0
        One = 1
        Customized = 2


@attrs.define
class ExecutionStrategy:
    """Accepted for compatibility."""

    num_threads: int = 0
    num_iteration_per_drop_scope: int = 100
    num_iteration_per_run: int = 1
    use_thread_barrier: bool = False
    allow_op_delay: bool = False


class CompiledProgram:
    """A program prepared for running, optionally data-parallel over ``places``."""

    def __init__(
        self, program_or_graph: Program, build_strategy: BuildStrategy | None = None
    ) -> None:
        if not isinstance(program_or_graph, Program):
            raise TypeError(
                f"CompiledProgram takes a Program, given {type(program_or_graph).__name__}"
            )
        self._program = program_or_graph
        self._build_strategy = build_strategy or BuildStrategy()
        self._exec_strategy = None
        self._places = None
        self._loss_name = None
        self._data_parallel = False
        self._oar_compiled = self

    def with_data_parallel(
        self,
        loss_name: str | None = None,
        build_strategy: BuildStrategy | None = None,
        exec_strategy: ExecutionStrategy | None = None,
        share_vars_from: CompiledProgram | None = None,
        places: Sequence | None = None,
    ) -> CompiledProgram:
        self._data_parallel = True
        self._loss_name = loss_name
        if build_strategy is not None:
            self._build_strategy = build_strategy
        self._exec_strategy = exec_strategy
        self._places = list(places) if places is not None else None
        return self

    def with_inference_optimize(self, config: Any) -> CompiledProgram:
        return self

    @property
    def program(self) -> Program:
        return self._program

    def _run(
        self,
        exe: Any,
        feed: Any,
        fetch_list: Any,
        scope: Any,
        return_numpy: bool,
        return_merged: bool,
    ) -> list:
        if isinstance(feed, (list, tuple)):
            feed = _merge_feeds(feed)
        program = self._program
        if not (self._data_parallel and program._readers):
            return exe.run(
                program, feed=feed, fetch_list=fetch_list, scope=scope, return_numpy=return_numpy
            )
        # non-iterable readers give each device its own batch per run, as in Fluid
        program._reader_batches_per_run = self._num_devices(exe)
        try:
            return exe.run(
                program, feed=feed, fetch_list=fetch_list, scope=scope, return_numpy=return_numpy
            )
        finally:
            program._reader_batches_per_run = 1

    def _num_devices(self, exe: Any) -> int:
        """Devices a data-parallel run spans: ``places``, else every GPU, else ``CPU_NUM`` (Fluid: 1)."""
        if self._places:
            return len(self._places)
        if exe.place.is_gpu_place():
            from oar.places import cuda_places

            return len(cuda_places())
        return max(1, int(os.environ.get("CPU_NUM", "1")))

    def __getattr__(self, name: str) -> Any:
        # let code that reads program attributes through a CompiledProgram work
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self._program, name)


def _merge_feeds(feeds: Sequence[Mapping]) -> dict:
    if not feeds:
        return {}
    if len(feeds) == 1:
        return dict(feeds[0])
    out = {}
    for name in feeds[0]:
        parts = [f[name] for f in feeds]
        if any(isinstance(p, LoDTensor) and p._lod for p in parts):
            lens = []
            arrays = []
            for p in parts:
                lens.extend(p.recursive_sequence_lengths()[0])
                arrays.append(np.asarray(p))
            t = LoDTensor(np.concatenate(arrays))
            t.set_recursive_sequence_lengths([lens])
            out[name] = t
        else:
            out[name] = np.concatenate([np.asarray(p) for p in parts])
    return out


class ParallelExecutor:
    """Fluid's ParallelExecutor, on the same machinery as CompiledProgram."""

    def __init__(
        self,
        use_cuda: bool,
        loss_name: str | None = None,
        main_program: Program | None = None,
        share_vars_from: Any = None,
        exec_strategy: Any = None,
        build_strategy: Any = None,
        num_trainers: int = 1,
        trainer_id: int = 0,
        scope: Any = None,
    ) -> None:
        from oar.executor.executor import Executor
        from oar.framework.program import default_main_program
        from oar.places import CPUPlace, CUDAPlace

        self._exe = Executor(CUDAPlace(0) if use_cuda else CPUPlace())
        self._compiled = CompiledProgram(main_program or default_main_program(), build_strategy)
        self._compiled.with_data_parallel(loss_name=loss_name, exec_strategy=exec_strategy)
        self._scope = scope

    def run(
        self, fetch_list: Any, feed: Any = None, feed_dict: Any = None, return_numpy: bool = True
    ) -> list:
        return self._exe.run(
            self._compiled,
            feed=feed if feed is not None else feed_dict,
            fetch_list=fetch_list,
            scope=self._scope,
            return_numpy=return_numpy,
        )

    def drop_local_exe_scopes(self) -> None:
        pass
