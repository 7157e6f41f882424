"""Bad values handed to oar-dist's user-facing API (DistributeTranspiler, its config, the
role makers and the environment variables they read, fleet, ParallelEnv) raise oar errors
that name the API, the argument or environment variable, and the value given, and point at
the user's line."""

from __future__ import annotations

import pytest
from oar import fluid
from oar.errors import ArgumentError, ArgumentTypeError, OarError

pytest.importorskip("oar_dist")

from oar.fluid.incubate.fleet.base import role_maker as rm
from oar.fluid.incubate.fleet.collective import Collective, DistributedStrategy
from oar.fluid.incubate.fleet.parameter_server.distribute_transpiler import (
    FleetTranspiler,
)
from oar.fluid.incubate.fleet.parameter_server.distribute_transpiler.distributed_strategy import (
    StrategyFactory,
)

TWO = "127.0.0.1:6170,127.0.0.1:6171"
ENV_NAMES = (
    "PADDLE_TRAINER_ID",
    "PADDLE_TRAINERS_NUM",
    "PADDLE_TRAINER_ENDPOINTS",
    "PADDLE_CURRENT_ENDPOINT",
    "PADDLE_PSERVERS_IP_PORT_LIST",
    "TRAINING_ROLE",
    "POD_IP",
    "PADDLE_PORT",
    "FLAGS_selected_gpus",
)


def _transpile(mode="pserver", **kw):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data("x", [None, 2], "float32")
        fluid.optimizer.SGD(0.1).minimize(fluid.layers.mean(fluid.layers.fc(x, 1)))
    config = fluid.DistributeTranspilerConfig()
    config.mode = mode
    args = {"trainer_id": 0, "program": main, "startup_program": startup}
    if mode == "pserver":
        args.update(pservers="127.0.0.1:6174", trainers=2)
    else:
        args.update(trainers=TWO, current_endpoint="127.0.0.1:6170")
    args.update(kw)
    fluid.DistributeTranspiler(config=config).transpile(**args)


def _cloud(is_collective=False):
    rm.PaddleCloudRoleMaker(is_collective=is_collective).generate_role()


def _set_config(name, value):
    setattr(fluid.DistributeTranspilerConfig(), name, value)


def _collective_minimize(optimizer, strategy):
    fleet = Collective()
    fleet.init(rm.UserDefinedCollectiveRoleMaker(0, ["127.0.0.1:6170"]))
    fleet.distributed_optimizer(optimizer, strategy=strategy)


def _ps_optimizer(optimizer, strategy):
    fleet = FleetTranspiler()
    fleet.init(rm.UserDefinedRoleMaker(0, rm.Role.WORKER, 1, ["127.0.0.1:6174"]))
    fleet.distributed_optimizer(optimizer, strategy)


def _strategy(**fields):
    s = DistributedStrategy()
    for k, v in fields.items():
        setattr(s, k, v)
    return s


def _split_files(files):
    fleet = Collective()
    fleet.init(rm.UserDefinedCollectiveRoleMaker(0, ["127.0.0.1:6170"]))
    fleet.split_files(files)


def _parallel_env():
    from oar.fluid.dygraph import ParallelEnv

    ParallelEnv()


PS_TRAINER = {
    "TRAINING_ROLE": "TRAINER",
    "PADDLE_PSERVERS_IP_PORT_LIST": "127.0.0.1:6174",
    "PADDLE_TRAINERS_NUM": "2",
    "PADDLE_TRAINER_ID": "0",
}
PS_SERVER = {**PS_TRAINER, "TRAINING_ROLE": "PSERVER", "POD_IP": "127.0.0.1", "PADDLE_PORT": "6174"}
SGD = fluid.optimizer.SGD(0.1)

# (id, env, call, error class, words the message must hold: API, argument, value given)
CASES = [
    # DistributeTranspiler.transpile
    (
        "pservers-no-port",
        {},
        lambda: _transpile(pservers="host"),
        ArgumentError,
        ["DistributeTranspiler.transpile", "pservers", "'host'", "ip:port"],
    ),
    (
        "pservers-port-range",
        {},
        lambda: _transpile(pservers="127.0.0.1:70000"),
        ArgumentError,
        ["DistributeTranspiler.transpile", "pservers", "70000", "1..65535"],
    ),
    (
        "pservers-twice",
        {},
        lambda: _transpile(pservers="a:1,a:1"),
        ArgumentError,
        ["DistributeTranspiler.transpile", "pservers", "twice", "'a:1'"],
    ),
    (
        "trainer-id-too-big",
        {},
        lambda: _transpile(trainer_id=2),
        ArgumentError,
        ["DistributeTranspiler.transpile", "trainer_id", "[0, 2)", "given 2"],
    ),
    (
        "trainer-id-negative",
        {},
        lambda: _transpile("nccl2", trainer_id=-1),
        ArgumentError,
        ["DistributeTranspiler.transpile", "trainer_id", ">= 0", "given -1"],
    ),
    (
        "trainer-id-type",
        {},
        lambda: _transpile(trainer_id="0"),
        ArgumentTypeError,
        ["DistributeTranspiler.transpile", "trainer_id", "an int", "'0'"],
    ),
    (
        "trainers-count",
        {},
        lambda: _transpile(trainers=0),
        ArgumentError,
        ["DistributeTranspiler.transpile", "trainers", ">= 1", "given 0"],
    ),
    (
        "sync-mode-type",
        {},
        lambda: _transpile(sync_mode="yes"),
        ArgumentTypeError,
        ["DistributeTranspiler.transpile", "sync_mode", "True or False", "'yes'"],
    ),
    (
        "current-endpoint-format",
        {},
        lambda: _transpile(current_endpoint="x"),
        ArgumentError,
        ["DistributeTranspiler.transpile", "current_endpoint", "ip:port", "'x'"],
    ),
    (
        "nccl2-trainers-count",
        {},
        lambda: _transpile("nccl2", trainers=2),
        ArgumentError,
        ["DistributeTranspiler.transpile", "trainers", "nccl2", "given 2"],
    ),
    (
        "nccl2-trainer-port",
        {},
        lambda: _transpile("nccl2", trainers="127.0.0.1:0,b:2"),
        ArgumentError,
        ["DistributeTranspiler.transpile", "trainers", "'127.0.0.1:0'", "1..65535"],
    ),
    (
        "nccl2-trainer-id",
        {},
        lambda: _transpile("nccl2", trainer_id=2),
        ArgumentError,
        ["DistributeTranspiler.transpile", "trainer_id", "[0, 2)", "given 2"],
    ),
    (
        "nccl2-current-not-mine",
        {},
        lambda: _transpile("collective", current_endpoint="1.2.3.4:5"),
        ArgumentError,
        ["DistributeTranspiler.transpile", "current_endpoint", "'127.0.0.1:6170'", "'1.2.3.4:5'"],
    ),
    # DistributeTranspilerConfig
    (
        "config-mode",
        {},
        lambda: _set_config("mode", "ring"),
        ArgumentError,
        ["DistributeTranspilerConfig", "mode", "'ring'", "nccl2"],
    ),
    (
        "config-collective-mode",
        {},
        lambda: _set_config("collective_mode", "ring"),
        ArgumentError,
        ["DistributeTranspilerConfig", "collective_mode", "'ring'", "grad_allreduce"],
    ),
    (
        "config-backend",
        {},
        lambda: _set_config("backend", "mpii"),
        ArgumentError,
        ["DistributeTranspilerConfig", "backend", "'mpii'", "'threads'", "did you mean 'mpi'"],
    ),
    (
        "config-backend-type",
        {},
        lambda: _set_config("backend", 1),
        ArgumentTypeError,
        ["DistributeTranspilerConfig", "backend", "'mpi'", "given 1"],
    ),
    (
        "config-flag",
        {},
        lambda: _set_config("slice_var_up", "no"),
        ArgumentTypeError,
        ["DistributeTranspilerConfig", "slice_var_up", "True or False", "'no'"],
    ),
    (
        "config-count",
        {},
        lambda: _set_config("min_block_size", 0),
        ArgumentError,
        ["DistributeTranspilerConfig", "min_block_size", ">= 1", "given 0"],
    ),
    # PaddleCloudRoleMaker(is_collective=True): the launcher's variables
    (
        "env-endpoints-format",
        {"PADDLE_TRAINER_ENDPOINTS": "host,127.0.0.1:2"},
        lambda: _cloud(True),
        ArgumentError,
        ["PaddleCloudRoleMaker", "PADDLE_TRAINER_ENDPOINTS", "'host'", "ip:port"],
    ),
    (
        "env-endpoints-port",
        {"PADDLE_TRAINER_ENDPOINTS": "127.0.0.1:99999"},
        lambda: _cloud(True),
        ArgumentError,
        ["PaddleCloudRoleMaker", "PADDLE_TRAINER_ENDPOINTS", "99999", "1..65535"],
    ),
    (
        "env-trainer-id-range",
        {"PADDLE_TRAINER_ENDPOINTS": TWO, "PADDLE_TRAINER_ID": "2"},
        lambda: _cloud(True),
        ArgumentError,
        ["PaddleCloudRoleMaker", "PADDLE_TRAINER_ID", "[0, 2)", "given 2"],
    ),
    (
        "env-trainer-id-text",
        {"PADDLE_TRAINER_ENDPOINTS": TWO, "PADDLE_TRAINER_ID": "one"},
        lambda: _cloud(True),
        ArgumentError,
        ["PaddleCloudRoleMaker", "PADDLE_TRAINER_ID", "'one'"],
    ),
    (
        "env-trainers-num-text",
        {"PADDLE_TRAINER_ENDPOINTS": TWO, "PADDLE_TRAINERS_NUM": "x"},
        lambda: _cloud(True),
        ArgumentError,
        ["PaddleCloudRoleMaker", "PADDLE_TRAINERS_NUM", "'x'"],
    ),
    (
        "env-trainers-num-disagrees",
        {"PADDLE_TRAINER_ENDPOINTS": TWO, "PADDLE_TRAINERS_NUM": "3"},
        lambda: _cloud(True),
        ArgumentError,
        [
            "PaddleCloudRoleMaker",
            "PADDLE_TRAINERS_NUM=3",
            "PADDLE_TRAINER_ENDPOINTS",
            "2 endpoints",
        ],
    ),
    (
        "env-current-endpoint",
        {
            "PADDLE_TRAINER_ENDPOINTS": TWO,
            "PADDLE_TRAINER_ID": "1",
            "PADDLE_CURRENT_ENDPOINT": "127.0.0.1:6170",
        },
        lambda: _cloud(True),
        ArgumentError,
        ["PaddleCloudRoleMaker", "PADDLE_CURRENT_ENDPOINT", "'127.0.0.1:6171'", "'127.0.0.1:6170'"],
    ),
    # PaddleCloudRoleMaker(): the parameter-server variables
    (
        "env-ps-role-missing",
        {k: v for k, v in PS_TRAINER.items() if k != "TRAINING_ROLE"},
        _cloud,
        ArgumentError,
        ["PaddleCloudRoleMaker", "TRAINING_ROLE", "is not set"],
    ),
    (
        "env-ps-role-unknown",
        {**PS_TRAINER, "TRAINING_ROLE": "WORKER"},
        _cloud,
        ArgumentError,
        ["PaddleCloudRoleMaker", "TRAINING_ROLE", "TRAINER or PSERVER", "'WORKER'"],
    ),
    (
        "env-ps-list-missing",
        {k: v for k, v in PS_TRAINER.items() if k != "PADDLE_PSERVERS_IP_PORT_LIST"},
        _cloud,
        ArgumentError,
        ["PaddleCloudRoleMaker", "PADDLE_PSERVERS_IP_PORT_LIST", "is not set"],
    ),
    (
        "env-ps-list-format",
        {**PS_TRAINER, "PADDLE_PSERVERS_IP_PORT_LIST": "host"},
        _cloud,
        ArgumentError,
        ["PaddleCloudRoleMaker", "PADDLE_PSERVERS_IP_PORT_LIST", "'host'"],
    ),
    (
        "env-ps-trainers-missing",
        {k: v for k, v in PS_TRAINER.items() if k != "PADDLE_TRAINERS_NUM"},
        _cloud,
        ArgumentError,
        ["PaddleCloudRoleMaker", "PADDLE_TRAINERS_NUM", "is not set"],
    ),
    (
        "env-ps-trainer-id-missing",
        {k: v for k, v in PS_TRAINER.items() if k != "PADDLE_TRAINER_ID"},
        _cloud,
        ArgumentError,
        ["PaddleCloudRoleMaker", "PADDLE_TRAINER_ID", "is not set"],
    ),
    (
        "env-ps-trainer-id-range",
        {**PS_TRAINER, "PADDLE_TRAINER_ID": "2"},
        _cloud,
        ArgumentError,
        ["PaddleCloudRoleMaker", "PADDLE_TRAINER_ID", "[0, 2)", "given 2"],
    ),
    (
        "env-ps-port-text",
        {**PS_SERVER, "PADDLE_PORT": "http"},
        _cloud,
        ArgumentError,
        ["PaddleCloudRoleMaker", "PADDLE_PORT", "'http'"],
    ),
    (
        "env-ps-port-range",
        {**PS_SERVER, "PADDLE_PORT": "70000"},
        _cloud,
        ArgumentError,
        ["PaddleCloudRoleMaker", "POD_IP:PADDLE_PORT", "70000", "1..65535"],
    ),
    (
        "env-ps-not-a-pserver",
        {**PS_SERVER, "PADDLE_PORT": "6175"},
        _cloud,
        ArgumentError,
        [
            "PaddleCloudRoleMaker",
            "POD_IP:PADDLE_PORT",
            "PADDLE_PSERVERS_IP_PORT_LIST",
            "'127.0.0.1:6175'",
        ],
    ),
    # role makers in code
    (
        "user-collective-endpoint",
        {},
        lambda: rm.UserDefinedCollectiveRoleMaker(0, ["host"]),
        ArgumentError,
        ["UserDefinedCollectiveRoleMaker", "worker_endpoints", "'host'"],
    ),
    (
        "user-collective-id",
        {},
        lambda: rm.UserDefinedCollectiveRoleMaker(1, ["a:1"]),
        ArgumentError,
        ["UserDefinedCollectiveRoleMaker", "current_id", "[0, 1)", "given 1"],
    ),
    (
        "user-ps-endpoint",
        {},
        lambda: rm.UserDefinedRoleMaker(0, rm.Role.WORKER, 2, ["a:0"]),
        ArgumentError,
        ["UserDefinedRoleMaker", "server_endpoints", "'a:0'", "1..65535"],
    ),
    (
        "user-ps-id",
        {},
        lambda: rm.UserDefinedRoleMaker(2, rm.Role.WORKER, 2, ["a:1"]),
        ArgumentError,
        ["UserDefinedRoleMaker", "current_id", "worker_num=2", "given 2"],
    ),
    (
        "user-ps-worker-num",
        {},
        lambda: rm.UserDefinedRoleMaker(0, rm.Role.WORKER, 0, ["a:1"]),
        ArgumentError,
        ["UserDefinedRoleMaker", "worker_num", ">= 1", "given 0"],
    ),
    (
        "user-ps-role",
        {},
        lambda: rm.UserDefinedRoleMaker(0, 3, 2, ["a:1"]),
        ArgumentError,
        ["UserDefinedRoleMaker", "role", "Role.WORKER", "given 3"],
    ),
    # fleet
    (
        "fleet-init",
        {},
        lambda: Collective().init("worker"),
        ArgumentTypeError,
        ["fleet.init", "role_maker", "str"],
    ),
    (
        "fleet-ps-init",
        {},
        lambda: FleetTranspiler().init(object()),
        ArgumentTypeError,
        ["fleet.init", "role_maker", "object"],
    ),
    (
        "fleet-strategy-type",
        {},
        lambda: _collective_minimize(SGD, "sync"),
        ArgumentTypeError,
        ["fleet.distributed_optimizer", "strategy", "DistributedStrategy", "str"],
    ),
    (
        "fleet-strategy-mode",
        {},
        lambda: _collective_minimize(SGD, _strategy(mode="ring")),
        ArgumentError,
        ["fleet.distributed_optimizer", "DistributedStrategy.mode", "'ring'"],
    ),
    (
        "fleet-collective-mode",
        {},
        lambda: _collective_minimize(SGD, _strategy(mode="collective", collective_mode="ring")),
        ArgumentError,
        ["fleet.distributed_optimizer", "collective_mode", "'ring'"],
    ),
    (
        "fleet-optimizer",
        {},
        lambda: _collective_minimize("sgd", None),
        ArgumentTypeError,
        ["fleet.distributed_optimizer", "optimizer", "minimize", "str"],
    ),
    (
        "fleet-ps-strategy",
        {},
        lambda: _ps_optimizer(SGD, DistributedStrategy()),
        ArgumentTypeError,
        ["fleet.distributed_optimizer", "strategy", "StrategyFactory", "DistributedStrategy"],
    ),
    (
        "fleet-ps-optimizer",
        {},
        lambda: _ps_optimizer(None, None),
        ArgumentTypeError,
        ["fleet.distributed_optimizer", "optimizer", "NoneType"],
    ),
    (
        "fleet-geo-frequency",
        {},
        lambda: StrategyFactory.create_geo_strategy(0),
        ArgumentError,
        ["StrategyFactory.create_geo_strategy", "update_frequency", ">= 1", "given 0"],
    ),
    (
        "fleet-split-files",
        {},
        lambda: _split_files("a.txt,b.txt"),
        ArgumentTypeError,
        ["fleet.split_files", "files", "list", "str"],
    ),
    # dygraph ParallelEnv
    (
        "parallel-env-rank",
        {"PADDLE_TRAINERS_NUM": "2", "PADDLE_TRAINER_ID": "2"},
        _parallel_env,
        ArgumentError,
        ["ParallelEnv", "PADDLE_TRAINER_ID", "[0, 2)", "given 2"],
    ),
    (
        "parallel-env-gpus",
        {"FLAGS_selected_gpus": "gpu0"},
        _parallel_env,
        ArgumentError,
        ["ParallelEnv", "FLAGS_selected_gpus", "'gpu0'"],
    ),
    (
        "parallel-env-endpoints",
        {"PADDLE_TRAINERS_NUM": "2", "PADDLE_TRAINER_ENDPOINTS": "a:1"},
        _parallel_env,
        ArgumentError,
        ["ParallelEnv", "PADDLE_TRAINER_ENDPOINTS", "2", "a:1"],
    ),
]


@pytest.mark.parametrize(
    "env, call, error, words", [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_bad_value_is_a_clear_oar_error(monkeypatch, env, call, error, words):
    for name in ENV_NAMES:
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(error) as info:
        call()
    assert isinstance(info.value, OarError)
    message = str(info.value)
    for word in words:
        assert word in message, (word, message)
    assert f"called at {__file__}" in message  # the user's line


def test_good_values_still_pass(monkeypatch):
    for name in ENV_NAMES:
        monkeypatch.delenv(name, raising=False)
    _transpile("nccl2", trainer_id=1, current_endpoint="127.0.0.1:6171")
    _transpile(trainers="127.0.0.1:1,127.0.0.1:2", trainer_id=1)
    for name, value in PS_SERVER.items():
        monkeypatch.setenv(name, value)
    role = rm.PaddleCloudRoleMaker()
    role.generate_role()
    assert role.is_server() and role.server_index() == 0 and role.worker_num() == 2
    monkeypatch.setenv("TRAINING_ROLE", "TRAINER")
    monkeypatch.setenv("PADDLE_TRAINER_ID", "1")
    role = rm.PaddleCloudRoleMaker()
    role.generate_role()
    assert role.is_worker() and role.worker_index() == 1
