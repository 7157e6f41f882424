"""``fluid.incubate.fleet`` collective API: 2 workers through launch train like one process."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("oar_dist")
pytest.importorskip("oar_io")

from oar import fluid
from oar.fluid.incubate.fleet.base import role_maker
from oar.fluid.incubate.fleet.collective import Collective, DistributedStrategy

from .launch_helpers import SCRIPTS, run_launch
from .test_mpi_training import reference

STEPS = 4


@pytest.mark.parametrize("mode", ["nccl2", "collective"])
def test_two_workers_train_like_one_process_and_the_first_saves(tmp_path, mode):
    run_launch(
        "--nproc_per_node", "2", "--log_dir", str(tmp_path / "logs"),
        str(SCRIPTS / "fleet_train.py"), mode, str(tmp_path), str(STEPS), timeout=120,
    )  # fmt: skip
    ranks = [np.load(tmp_path / f"rank{r}.npz") for r in range(2)]
    want = reference(STEPS)
    assert [bool(r["first"]) for r in ranks] == [True, False]
    for name in want:
        # worker 0's initial values everywhere (each drew its own), then the same steps
        np.testing.assert_array_equal(ranks[0]["init:" + name], ranks[1]["init:" + name])
        np.testing.assert_array_equal(ranks[0]["param:" + name], ranks[1]["param:" + name])
        np.testing.assert_allclose(ranks[0]["param:" + name], want[name], rtol=1e-5, atol=1e-6)
    # each worker fetched the loss of its own half
    assert not np.array_equal(ranks[0]["losses"], ranks[1]["losses"])
    # the first worker's checkpoint holds the trained values and reloads into a fresh scope
    scope = fluid.Scope()
    with fluid.scope_guard(scope):
        exe = fluid.Executor(fluid.CPUPlace())
        prog, feeds, fetches = fluid.io.load_inference_model(str(tmp_path / "inference"), exe)
        assert feeds == ["x"]
        for name in want:
            np.testing.assert_array_equal(
                np.array(scope.find_var(name).get_tensor()), ranks[0]["param:" + name]
            )
    assert (tmp_path / "persistables").is_dir()


def test_role_makers_read_the_launch_variables(monkeypatch):
    monkeypatch.setenv("PADDLE_TRAINER_ID", "1")
    monkeypatch.setenv("PADDLE_TRAINERS_NUM", "2")
    monkeypatch.setenv("PADDLE_TRAINER_ENDPOINTS", "10.0.0.1:6170,10.0.0.2:6170")
    monkeypatch.setenv("PADDLE_CURRENT_ENDPOINT", "10.0.0.2:6170")
    fleet = Collective()
    fleet.init(role_maker.PaddleCloudRoleMaker(is_collective=True))
    assert (fleet.worker_index(), fleet.worker_num(), fleet.is_first_worker()) == (1, 2, False)
    assert fleet.worker_endpoints(to_string=True) == "10.0.0.1:6170,10.0.0.2:6170"
    assert fleet.is_worker() and not fleet.is_server()
    monkeypatch.setenv("PADDLE_TRAINERS_NUM", "3")
    with pytest.raises(ValueError, match="PADDLE_TRAINERS_NUM=3 but PADDLE_TRAINER_ENDPOINTS"):
        Collective().init(role_maker.PaddleCloudRoleMaker(is_collective=True))
    with pytest.raises(
        NotImplementedError, match="parameter-server job.*distribute_transpiler.fleet"
    ):
        Collective().init(role_maker.PaddleCloudRoleMaker())


def test_user_defined_role_maker_and_one_worker_training():
    fleet = Collective()
    with pytest.raises(
        ValueError, match=r"current_id must be in \[0, 2\) for 2 worker_endpoints, given 2"
    ):
        role_maker.UserDefinedCollectiveRoleMaker(2, ["a:1", "b:2"])
    with pytest.raises(RuntimeError, match=r"call fleet.init\(role_maker\) first"):
        fleet.worker_index()
    fleet.init(role_maker.UserDefinedCollectiveRoleMaker(0, ["127.0.0.1:6170"]))
    assert (fleet.worker_index(), fleet.worker_num(), fleet.is_first_worker()) == (0, 1, True)
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        x = fluid.layers.data("x", [2])
        loss = fluid.layers.mean(fluid.layers.fc(x, 1))
        opt = fleet.distributed_optimizer(fluid.optimizer.SGD(0.1))
        opt.minimize(loss)
    assert fleet.startup_program is startup
    assert isinstance(fleet.main_program, fluid.CompiledProgram)  # nccl2: with_data_parallel
    scope = fluid.Scope()
    with fluid.scope_guard(scope):
        exe = fluid.Executor(fluid.CPUPlace())
        exe.run(fleet.startup_program)
        (value,) = exe.run(
            fleet.main_program, feed={"x": np.ones((4, 2), "float32")}, fetch_list=[loss]
        )
    assert np.isfinite(value).all()


def test_strategy_is_a_build_strategy_and_refuses_what_is_not_implemented():
    s = DistributedStrategy()
    assert isinstance(s, fluid.BuildStrategy)
    assert (s.mode, s.collective_mode, s.nccl_comm_num, s.use_local_sgd) == (
        "nccl2",
        None,
        1,
        False,
    )
    with pytest.raises(AttributeError):
        s.no_such_setting = 1
    fleet = Collective()
    fleet.init(role_maker.UserDefinedCollectiveRoleMaker(0, ["127.0.0.1:6170"]))
    s.use_local_sgd = True
    with pytest.raises(NotImplementedError, match="use_local_sgd"):
        fleet.distributed_optimizer(fluid.optimizer.SGD(0.1), strategy=s)
    with pytest.raises(TypeError, match="DistributedStrategy"):
        fleet.distributed_optimizer(fluid.optimizer.SGD(0.1), strategy=fluid.BuildStrategy())


def test_fleet_modules_are_the_plugins_own():
    import oar_dist.incubate.fleet.base.role_maker as real_role_maker
    import oar_dist.incubate.fleet.collective as real_collective
    from oar.fluid.incubate.fleet import collective

    assert role_maker is real_role_maker  # one module, not a copy under the alias name
    assert collective is real_collective and collective.fleet is real_collective.fleet


def test_both_fleets_share_fleet_base_and_split_files_in_blocks():
    from oar.fluid.incubate.fleet.base import fleet_base
    from oar.fluid.incubate.fleet.parameter_server.distribute_transpiler import FleetTranspiler

    assert issubclass(Collective, fleet_base.Fleet) and issubclass(
        FleetTranspiler, fleet_base.Fleet
    )
    assert (fleet_base.Mode.TRANSPILER, fleet_base.Mode.PSLIB, fleet_base.Mode.COLLECTIVE) == (
        1,
        2,
        3,
    )
    files = [f"part-{i}" for i in range(8)]
    shares = []
    for rank in range(3):
        fleet = FleetTranspiler()
        fleet.init(role_maker.UserDefinedRoleMaker(rank, role_maker.Role.WORKER, 3, ["a:1"]))
        shares.append(fleet.split_files(files))
    # contiguous blocks in worker order, the first 8 % 3 workers one file more
    assert shares == [files[0:3], files[3:6], files[6:8]]
    fleet = Collective()
    fleet.init(role_maker.UserDefinedCollectiveRoleMaker(1, ["a:1", "a:2"]))
    assert fleet.split_files(["x"]) == [] and fleet.split_files(["x", "y", "z"]) == ["z"]
    assert not fleet.is_server() and fleet.server_num() == 0
    with pytest.raises(RuntimeError, match="PaddleCloudRoleMaker\\(is_collective=True\\)"):
        Collective().worker_num()
