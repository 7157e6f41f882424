"""``fluid.incubate.fleet.collective``: Fluid 1.8's usual entry point to collective training.

::

    fleet.init(role_maker.PaddleCloudRoleMaker(is_collective=True))
    opt = fleet.distributed_optimizer(fluid.optimizer.SGD(0.1), strategy=DistributedStrategy())
    opt.minimize(loss)
    exe.run(fleet.startup_program)
    exe.run(fleet.main_program, feed=..., fetch_list=[loss])

``minimize`` transpiles through :class:`~oar_dist.transpiler.DistributeTranspiler`:
strategy ``mode="nccl2"`` (the default) gives ``fleet.main_program`` as a
``CompiledProgram`` with ``num_trainers``/``trainer_id`` (the all-reduce over
places x trainers); ``mode="collective"`` with ``collective_mode="grad_allreduce"``
gives the rewritten ``Program`` itself. Both start every worker from worker
0's parameters (the startup program broadcasts them).
"""

from __future__ import annotations

from typing import Any

import attrs
from oar.api import BuildStrategy, CompiledProgram, CPUPlace, ExecutionStrategy, Executor

from oar_dist import checks
from oar_dist.incubate.fleet.base.fleet_base import Fleet, Mode
from oar_dist.incubate.fleet.base.role_maker import RoleMakerBase

PSERVER_HINT = (
    "the collective fleet has no servers; parameter-server training uses "
    "fluid.incubate.fleet.parameter_server.distribute_transpiler.fleet"
)

_REFUSED = {
    "use_local_sgd": "local SGD",
    "use_dist_fc": "distributed fc",
    "use_amp": "automatic mixed precision",
    "forward_recompute": "forward recomputation",
}


@attrs.define(slots=True)
class DistributedStrategy(BuildStrategy):
    """A ``BuildStrategy`` with fleet's collective settings (Fluid 1.8's defaults)."""

    mode: str = "nccl2"
    collective_mode: str | None = None
    use_local_sgd: bool = False
    use_dist_fc: bool = False
    dist_fc_config: Any = None
    use_amp: bool = False
    amp_loss_scaling: float = 2**15
    forward_recompute: bool = False
    recompute_checkpoints: list = attrs.field(factory=list)
    exec_strategy: ExecutionStrategy = attrs.field(factory=ExecutionStrategy)


class Collective(Fleet):
    """The collective fleet: the job's workers, its optimizer and the programs to run."""

    _INIT_EXAMPLE = "fleet.init(role_maker.PaddleCloudRoleMaker(is_collective=True))"

    def __init__(self) -> None:
        super().__init__(Mode.COLLECTIVE)
        self._executor: Executor | None = None
        self._optimizer: CollectiveOptimizer | None = None
        self._origin_program: Any = None
        self._transpiled_program: Any = None
        self._is_initialized = False
        self.main_program: Any = None
        self.startup_program: Any = None

    # --- the job --------------------------------------------------------------------------------
    def init(self, role_maker: RoleMakerBase | None = None) -> None:
        """Who this process is: ``role_maker`` (default ``PaddleCloudRoleMaker(is_collective=True)``)."""
        from oar_dist.incubate.fleet.base.role_maker import PaddleCloudRoleMaker

        if role_maker is None:
            role_maker = PaddleCloudRoleMaker(is_collective=True)
        if not isinstance(role_maker, RoleMakerBase):
            checks.fail(
                "fleet.init",
                f"role_maker must be a role maker of fluid.incubate.fleet.base.role_maker "
                f"(e.g. PaddleCloudRoleMaker(is_collective=True)), given "
                f"{type(role_maker).__name__}",
                type_error=True,
            )
        if (
            getattr(role_maker, "_is_collective", True) is False
            or role_maker.get_pserver_endpoints()
        ):
            raise NotImplementedError(
                f"fleet.init (collective): {type(role_maker).__name__} describes a "
                f"parameter-server job: use {PSERVER_HINT.rsplit(' uses ', 1)[1]}, or "
                f"PaddleCloudRoleMaker(is_collective=True) for collective training"
            )
        role_maker.generate_role()
        self._role_maker = role_maker
        self._executor = Executor(CPUPlace())
        self._is_initialized = True

    def is_server(self) -> bool:
        return False

    def server_num(self) -> int:
        return 0

    def server_index(self) -> int:
        raise NotImplementedError("fleet.server_index: the collective fleet has no servers")

    def server_endpoints(self, to_string: bool = False) -> Any:
        return "" if to_string else []

    def init_worker(self) -> None:
        """Nothing to do in collective mode (the startup program joins the job)."""

    def stop_worker(self) -> None:
        """Nothing to do in collective mode."""

    def init_server(self, model_dir: Any = None) -> None:
        raise NotImplementedError(f"fleet.init_server: {PSERVER_HINT}")

    def run_server(self) -> None:
        raise NotImplementedError(f"fleet.run_server: {PSERVER_HINT}")

    # --- training -------------------------------------------------------------------------------
    def distributed_optimizer(
        self, optimizer: Any, strategy: DistributedStrategy | None = None
    ) -> CollectiveOptimizer:
        """Wrap ``optimizer`` so ``minimize`` builds this worker's programs."""
        self._role("distributed_optimizer")
        self._optimizer = CollectiveOptimizer(optimizer, strategy, fleet=self)
        return self._optimizer

    # --- saving (the first worker writes; the others hold the same values) ----------------------
    def _program_to_save(self, main_program: Any) -> Any:
        prog = main_program if main_program is not None else self._transpiled_program
        if prog is None:
            raise RuntimeError(
                "fleet.save_*: no program yet: call fleet.distributed_optimizer(...).minimize(loss) "
                "first or pass main_program"
            )
        return prog.program if isinstance(prog, CompiledProgram) else prog

    def save_persistables(
        self, executor: Any, dirname: str, main_program: Any = None, filename: str | None = None
    ) -> None:
        """``fluid.io.save_persistables`` on the first worker (every worker has the same values)."""
        if not self.is_first_worker():
            return
        from oar.fluid import io

        io.save_persistables(executor, dirname, self._program_to_save(main_program), filename)

    def save_inference_model(
        self,
        executor: Any,
        dirname: str,
        feeded_var_names: Any = None,
        target_vars: Any = None,
        main_program: Any = None,
        export_for_deployment: bool = True,
    ) -> None:
        """``fluid.io.save_inference_model`` of the untranspiled program, on the first worker."""
        if not self.is_first_worker():
            return
        from oar.fluid import io

        prog = main_program if main_program is not None else self._origin_program
        io.save_inference_model(
            dirname,
            feeded_var_names,
            target_vars,
            executor,
            main_program=self._program_to_save(prog),
            export_for_deployment=export_for_deployment,
        )


class CollectiveOptimizer:
    """``fleet.distributed_optimizer(opt)``: ``minimize`` is the optimizer's, then the transpile."""

    def __init__(
        self, optimizer: Any, strategy: DistributedStrategy | None = None, fleet: Any = None
    ) -> None:
        if strategy is None:
            strategy = DistributedStrategy()
        if not isinstance(strategy, DistributedStrategy):
            checks.fail(
                "fleet.distributed_optimizer",
                f"strategy must be a fluid.incubate.fleet.collective.DistributedStrategy, given "
                f"{type(strategy).__name__}",
                type_error=True,
            )
        for attr, what in _REFUSED.items():
            if getattr(strategy, attr):
                raise NotImplementedError(
                    f"fleet.distributed_optimizer: DistributedStrategy.{attr}=True ({what}) is not "
                    f"implemented; collective training runs grad_allreduce data parallel"
                )
        api = "fleet.distributed_optimizer"
        checks.one_of(api, "DistributedStrategy.mode", strategy.mode, ("nccl2", "collective"))
        if strategy.collective_mode is not None:
            checks.one_of(
                api,
                "DistributedStrategy.collective_mode",
                strategy.collective_mode,
                ("grad_allreduce", "local_sgd"),
            )
        self._optimizer = checks.optimizer(api, optimizer)
        self._strategy = strategy
        self._fleet = fleet if fleet is not None else globals()["fleet"]

    def __getattr__(self, name: str) -> Any:  # get_lr, state of the wrapped optimizer
        return getattr(self._optimizer, name)

    def backward(self, *args: Any, **kwargs: Any) -> Any:
        return self._optimizer.backward(*args, **kwargs)

    def apply_gradients(self, params_grads: Any) -> Any:
        return self._optimizer.apply_gradients(params_grads)

    def minimize(
        self,
        loss: Any,
        startup_program: Any = None,
        parameter_list: Any = None,
        no_grad_set: Any = None,
    ) -> tuple:
        """Add the backward and update ops, then make this worker's programs (``fleet.*_program``)."""
        from oar.api import default_startup_program

        fleet = self._fleet
        fleet._role("distributed_optimizer(...).minimize")
        main = loss.block.program
        startup = startup_program if startup_program is not None else default_startup_program()
        fleet._origin_program = main.clone()
        result = self._optimizer.minimize(loss, startup, parameter_list, no_grad_set)
        nranks, rank = fleet.worker_num(), fleet.worker_index()
        eps = fleet.worker_endpoints()
        s = self._strategy
        if nranks > 1:
            self._transpile(main, startup, rank, eps)
        fleet._transpiled_program = main
        fleet.startup_program = startup
        if s.mode == "collective":
            fleet.main_program = main
        else:
            s.num_trainers, s.trainer_id, s.trainers_endpoints = nranks, rank, list(eps)
            fleet.main_program = CompiledProgram(main).with_data_parallel(
                loss_name=loss.name, build_strategy=s, exec_strategy=s.exec_strategy
            )
        return result

    def _transpile(self, main: Any, startup: Any, rank: int, eps: list) -> None:
        from oar_dist.transpiler import DistributeTranspiler, DistributeTranspilerConfig

        s = self._strategy
        config = DistributeTranspilerConfig()
        config.mode = s.mode
        if s.mode == "collective":
            config.collective_mode = s.collective_mode or "grad_allreduce"
            config.fuse_all_reduce_ops = s.fuse_all_reduce_ops
        DistributeTranspiler(config=config).transpile(
            rank,
            program=main,
            trainers=",".join(eps),
            current_endpoint=eps[rank],
            startup_program=startup,
        )


fleet = Collective()

__all__ = ["Collective", "CollectiveOptimizer", "DistributedStrategy", "fleet"]
