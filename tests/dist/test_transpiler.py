"""DistributeTranspiler in one process: what the collective modes write into the programs,
the config's Fluid 1.8 attributes, and the clear errors (pserver mode, bad arguments)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("oar_dist")

from oar import fluid


def model():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        x = fluid.layers.data("x", [4])
        loss = fluid.layers.mean(fluid.layers.fc(fluid.layers.fc(x, 3, act="relu"), 1))
        fluid.optimizer.SGD(0.1).minimize(loss)
    return main, startup, loss


def transpile(mode, trainer_id=0, trainers="127.0.0.1:6170,127.0.0.1:6171", **config):
    main, startup, loss = model()
    cfg = fluid.DistributeTranspilerConfig()
    cfg.mode = mode
    for k, v in config.items():
        setattr(cfg, k, v)
    t = fluid.DistributeTranspiler(config=cfg)
    t.transpile(
        trainer_id,
        program=main,
        trainers=trainers,
        current_endpoint="127.0.0.1:6170",
        startup_program=startup,
    )
    return t, main, startup, loss


def types(program):
    return [op.type for op in program.global_block().ops]


def test_nccl2_adds_comm_init_and_broadcast_to_startup_only():
    before = types(model()[0])
    t, main, startup, _ = transpile("nccl2")
    assert types(main) == before
    st = types(startup)
    assert st.index("c_gen_nccl_id") < st.index("c_comm_init") < st.index("c_broadcast")
    assert st[-1] == "c_sync_comm_stream"
    assert st.count("c_broadcast") == len(main.all_parameters())
    text = str(startup)
    assert "c_comm_init" in text and "'nranks': 2" in text and "'root': 0" in text
    assert t.get_trainer_program() is main and t.get_startup_program() is startup


def test_collective_mode_carries_the_gradient_allreduce_in_the_main_program():
    t, main, startup, loss = transpile(
        "collective", collective_mode="grad_allreduce", fuse_all_reduce_ops=False
    )
    text = str(main)
    assert text.count("c_allreduce_sum") == 4 and "c_sync_comm_stream" in text
    seed = next(op for op in main.global_block().ops if op.type == "fill_constant")
    assert seed.attrs["value"] == 0.5  # the loss gradient is scaled by 1/nranks
    ops = types(main)
    assert max(i for i, o in enumerate(ops) if o == "c_allreduce_sum") < ops.index("sgd")
    _, fused, _, _ = transpile("collective", collective_mode="grad_allreduce")
    assert "c_fused_allreduce_sum" in types(fused)


def test_one_trainer_job_runs_in_a_plain_process():
    t, main, startup, loss = transpile(
        "collective", trainers="127.0.0.1:6170", collective_mode="grad_allreduce"
    )
    scope = fluid.Scope()
    with fluid.scope_guard(scope):
        exe = fluid.Executor(fluid.CPUPlace())
        exe.run(startup)
        (out,) = exe.run(main, feed={"x": np.ones((2, 4), "float32")}, fetch_list=[loss])
    assert out.shape == (1,)


def test_two_trainers_in_one_process_say_how_to_start_them():
    _, main, startup, _ = transpile("nccl2")
    with fluid.scope_guard(fluid.Scope()):
        with pytest.raises(RuntimeError, match="c_gen_nccl_id.*rank 0 of 2 trainers.*mpiexec -n 2"):
            fluid.Executor(fluid.CPUPlace()).run(startup)


def test_bad_arguments_are_clear_errors():
    with pytest.raises(ValueError, match="mode must be one of"):
        fluid.DistributeTranspilerConfig().mode = "ring"
    with pytest.raises(AttributeError, match="has no attribute 'modes'"):
        fluid.DistributeTranspilerConfig().modes = "nccl2"
    with pytest.raises(
        ValueError, match=r"trainer_id must be in \[0, 2\) for 2 trainers .*given 2"
    ):
        transpile("nccl2", trainer_id=2)
    with pytest.raises(ValueError, match="trainers must list every trainer's endpoint"):
        transpile("nccl2", trainers=2)
    with pytest.raises(ValueError, match="set config.collective_mode"):
        transpile("collective")
    with pytest.raises(TypeError, match="config must be a fluid.DistributeTranspilerConfig"):
        fluid.DistributeTranspiler(config={"mode": "nccl2"})


def test_config_has_fluid_18_attributes():
    cfg = fluid.DistributeTranspilerConfig()
    want = {
        "collective_mode": None,
        "completely_not_async": False,
        "enable_dc_asgd": False,
        "geo_sgd_mode": False,
        "geo_sgd_need_push_nums": 100,
        "half_async": False,
        "hierarchical_allreduce_inter_nranks": 0,
        "min_block_size": 8192,
        "mode": "pserver",
        "nccl_comm_num": 1,
        "print_log": False,
        "runtime_split_send_recv": False,
        "slice_var_up": True,
        "split_method": None,
        "sync_mode": True,
        "use_hierarchical_allreduce": False,
        "wait_port": True,
    }
    assert {k: getattr(cfg, k) for k in want} == want
