"""CompiledProgram and ParallelExecutor: Fluid's single-machine data parallelism.

Core owns the API and runs a program on one place itself. On more places (or
trainers), the ``oar_data_parallel_runner`` hook provides the runner (oar-dist:
one thread per place, gradients all-reduced; see ``docs/dist.md``); without
it, a multi-place run raises :class:`~oar.errors.MissingPluginError`.

``BuildStrategy`` / ``ExecutionStrategy`` accept every attribute of Fluid 1.8;
those that only steer Fluid's graph passes or GPU streams are recorded and
have no effect (oar's plan already frees temporaries and updates in place).
"""

from __future__ import annotations

import enum
import os
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import numpy as np

from oar.errors import FeedError, MissingPluginError
from oar.framework.program import Program
from oar.lod_tensor import LoDTensor


class ReduceStrategy(enum.IntEnum):
    AllReduce = 0
    Reduce = 1


class GradientScaleStrategy(enum.IntEnum):
    CoeffNumDevice = 0
    One = 1
    Customized = 2


def _enum(kind):
    def convert(value):
        try:
            return kind(value)
        except ValueError:
            raise ValueError(
                f"BuildStrategy: {kind.__name__} must be one of "
                f"{[f'{m.name} ({m.value})' for m in kind]}, given {value!r}"
            ) from None

    return convert


@attrs.define(slots=True)
class BuildStrategy:
    """How a data-parallel program is built (Fluid 1.8's attributes; see docs/dist.md).

    Effective on the CPU: ``gradient_scale_strategy``, ``fuse_all_reduce_ops``
    (bucketed all-reduce), ``num_trainers``/``trainer_id``, ``sync_batch_norm``
    (refused when it would matter: not supported yet). ``reduce_strategy``
    Reduce gives the same parameters as AllReduce. The rest are accepted and
    recorded without effect.
    """

    ReduceStrategy = ReduceStrategy
    GradientScaleStrategy = GradientScaleStrategy

    reduce_strategy: ReduceStrategy = attrs.field(
        default=ReduceStrategy.AllReduce,
        converter=_enum(ReduceStrategy),
        on_setattr=attrs.setters.convert,
    )
    gradient_scale_strategy: GradientScaleStrategy = attrs.field(
        default=GradientScaleStrategy.CoeffNumDevice,
        converter=_enum(GradientScaleStrategy),
        on_setattr=attrs.setters.convert,
    )
    fuse_all_reduce_ops: bool = True
    fuse_all_optimizer_ops: bool = False
    fuse_elewise_add_act_ops: bool = False
    fuse_bn_act_ops: bool = False
    fuse_relu_depthwise_conv: bool = False
    fuse_broadcast_ops: bool = True
    enable_auto_fusion: bool = False
    enable_inplace: bool = True
    memory_optimize: bool | None = None
    enable_sequential_execution: bool = False
    enable_backward_optimizer_op_deps: bool = True
    cache_runtime_context: bool = False
    remove_unnecessary_lock: bool = True
    sync_batch_norm: bool = False
    num_trainers: int = 1
    trainer_id: int = 0
    trainers_endpoints: list = attrs.field(factory=list)
    nccl_comm_num: int = 1
    use_hierarchical_allreduce: bool = False
    hierarchical_allreduce_inter_nranks: int = 0
    is_distribution: bool = False
    async_mode: bool = False
    mkldnn_enabled_op_types: set = attrs.field(factory=set)
    debug_graphviz_path: str = ""


@attrs.define(slots=True)
class ExecutionStrategy:
    """How a data-parallel program runs (Fluid 1.8's attributes).

    oar runs one thread per place and frees temporaries after their last use,
    so ``num_threads``, ``num_iteration_per_drop_scope``, ``allow_op_delay``,
    ``use_thread_barrier`` and ``use_experimental_executor`` have no effect;
    ``num_iteration_per_run`` other than 1 is refused.
    """

    num_threads: int = 0
    num_iteration_per_drop_scope: int = 100
    num_iteration_per_run: int = 1
    use_thread_barrier: bool = False
    allow_op_delay: bool = False
    use_cuda: bool = True
    use_experimental_executor: bool = True


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
        self._exec_strategy: ExecutionStrategy | None = None
        self._places: list | None = None
        self._loss_name: str | None = None
        self._share_vars_from: CompiledProgram | None = None
        self._data_parallel = False
        self._runner: Any = None

    @property
    def _oar_compiled(self) -> CompiledProgram:
        # what Executor.run looks for; a property, not an attribute, so no reference cycle keeps a
        # dropped program (and its runner's place threads) alive until the garbage collector runs
        return self

    def with_data_parallel(
        self,
        loss_name: str | None = None,
        build_strategy: BuildStrategy | None = None,
        exec_strategy: ExecutionStrategy | None = None,
        share_vars_from: CompiledProgram | None = None,
        places: Sequence | None = None,
    ) -> CompiledProgram:
        """Run on several places (``places``, else every GPU, else ``CPU_NUM``), each on its share
        of the batch, with gradients averaged over the places (``BuildStrategy``)."""
        if self._data_parallel:
            raise RuntimeError("CompiledProgram.with_data_parallel: already called on this program")
        if share_vars_from is not None and not isinstance(share_vars_from, CompiledProgram):
            raise TypeError(
                f"with_data_parallel: share_vars_from must be a CompiledProgram, given "
                f"{type(share_vars_from).__name__}"
            )
        if loss_name is not None and not isinstance(loss_name, str):
            loss_name = getattr(loss_name, "name", loss_name)
            if not isinstance(loss_name, str):
                raise TypeError("with_data_parallel: loss_name must be a variable name (str)")
        self._data_parallel = True
        self._loss_name = loss_name
        if build_strategy is not None:
            if not isinstance(build_strategy, BuildStrategy):
                raise TypeError(
                    f"with_data_parallel: build_strategy must be a fluid.BuildStrategy, given "
                    f"{type(build_strategy).__name__}"
                )
            self._build_strategy = build_strategy
        if exec_strategy is not None and not isinstance(exec_strategy, ExecutionStrategy):
            raise TypeError(
                f"with_data_parallel: exec_strategy must be a fluid.ExecutionStrategy, given "
                f"{type(exec_strategy).__name__}"
            )
        self._exec_strategy = exec_strategy
        self._share_vars_from = share_vars_from
        self._places = list(places) if places is not None else None
        if self._places is not None and not self._places:
            raise ValueError("with_data_parallel: places is an empty list")
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
        program = self._program
        if self._data_parallel:
            n = self._num_devices(exe)
            if n > 1 or int(self._build_strategy.num_trainers or 1) > 1:
                return self._parallel_runner(n).run(
                    exe, feed, fetch_list, scope, return_numpy, return_merged
                )
        if isinstance(feed, (list, tuple)):
            if len(feed) != 1:
                raise FeedError(
                    f"Executor.run: a list of {len(feed)} feed dicts needs as many places, but this "
                    f"CompiledProgram runs on 1 (set places=, or CPU_NUM for CPU places)"
                )
            feed = feed[0]
        return exe.run(
            program, feed=feed, fetch_list=fetch_list, scope=scope, return_numpy=return_numpy
        )

    def _parallel_runner(self, n: int) -> Any:
        runner = self._runner
        if runner is not None and runner.n == n:
            return runner
        from oar.plugins import _manager, registries

        registries()
        runner = _manager().hook.oar_data_parallel_runner(compiled=self, num_places=n)
        if runner is None:
            trainers = int(self._build_strategy.num_trainers or 1)
            what = f"{n} places" if trainers <= 1 else f"{n} place(s) x {trainers} trainers"
            raise MissingPluginError(
                f"CompiledProgram.with_data_parallel: running on {what} needs the oar-dist "
                f"plugin, which is not installed: pip install oar-dist (one place runs without it)"
            )
        self._runner = runner
        return runner

    def _num_devices(self, exe: Any) -> int:
        """Places a data-parallel run spans: ``places``, else every GPU, else ``CPU_NUM`` (Fluid: 1)."""
        if self._places:
            return len(self._places)
        if exe.place.is_gpu_place():
            from oar.places import cuda_places

            return len(cuda_places())
        raw = os.environ.get("CPU_NUM", "1")
        try:
            return max(1, int(raw))
        except ValueError:
            raise ValueError(f"CPU_NUM must be a number of CPU places, given {raw!r}") from None

    def __getattr__(self, name: str) -> Any:
        # let code that reads program attributes through a CompiledProgram work
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self._program, name)


def merge_feeds(feeds: Sequence[Mapping]) -> dict:
    """Several feed dicts as one (batches concatenated, LoDs joined): a loader's per-place batches.

    Public (``oar.api.merge_feeds``) because a data plugin that reads one batch per place
    hands the executor one feed.
    """
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
    """Fluid's ParallelExecutor: a data-parallel CompiledProgram and an Executor in one object."""

    def __init__(
        self,
        use_cuda: bool,
        loss_name: str | None = None,
        main_program: Program | None = None,
        share_vars_from: ParallelExecutor | None = None,
        exec_strategy: ExecutionStrategy | None = None,
        build_strategy: BuildStrategy | None = None,
        num_trainers: int = 1,
        trainer_id: int = 0,
        scope: Any = None,
    ) -> None:
        from oar.executor.executor import Executor
        from oar.framework.program import default_main_program
        from oar.places import CPUPlace, CUDAPlace

        if share_vars_from is not None and not isinstance(share_vars_from, ParallelExecutor):
            raise TypeError(
                f"ParallelExecutor: share_vars_from must be a ParallelExecutor, given "
                f"{type(share_vars_from).__name__}"
            )
        if int(num_trainers) < 1 or not 0 <= int(trainer_id) < int(num_trainers):
            raise ValueError(
                f"ParallelExecutor: need num_trainers >= 1 and 0 <= trainer_id < num_trainers, "
                f"given num_trainers={num_trainers}, trainer_id={trainer_id}"
            )
        build_strategy = build_strategy if build_strategy is not None else BuildStrategy()
        build_strategy.num_trainers = int(num_trainers)
        build_strategy.trainer_id = int(trainer_id)
        self._exe = Executor(CUDAPlace(0) if use_cuda else CPUPlace())
        self._compiled = CompiledProgram(main_program or default_main_program(), build_strategy)
        self._compiled.with_data_parallel(
            loss_name=loss_name,
            build_strategy=build_strategy,
            exec_strategy=exec_strategy,
            share_vars_from=share_vars_from._compiled if share_vars_from is not None else None,
        )
        self._scope = scope

    @property
    def device_count(self) -> int:
        return self._compiled._num_devices(self._exe)

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
        """Fluid frees the places' temporaries here; oar frees them after their last use already."""
