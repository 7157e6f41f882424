"""Dygraph ``DataParallel`` on 2 ranks through launch, against a numpy reference; ParallelEnv."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("oar_dist")

from oar import fluid

from .launch_helpers import SCRIPTS, run_launch
from .mpi_helpers import require_mpi


def test_two_ranks_take_the_mean_gradient_step_of_the_whole_batch(tmp_path):
    steps = 3
    out = tmp_path / "dp"
    run_launch(
        "--nproc_per_node", "2", "--log_dir", str(tmp_path / "logs"),
        str(SCRIPTS / "dygraph_dp_linear.py"), str(out), str(steps),
    )  # fmt: skip
    r0, r1 = (np.load(f"{out}.{r}.npz") for r in (0, 1))
    # DataParallel started rank 1 from rank 0's (different) initial parameters
    np.testing.assert_array_equal(r0["w0.weight"], r1["w0.weight"])
    np.testing.assert_array_equal(r0["w.weight"], r1["w.weight"])
    np.testing.assert_array_equal(r0["w.bias"], r1["w.bias"])
    # numpy: SGD on the mean squared error of all 8 samples (same data as the script)
    rng = np.random.RandomState(0)
    X = rng.rand(steps, 8, 4).astype("float32")
    Y = rng.rand(steps, 8, 1).astype("float32")
    w = r0["w0.weight"].astype(np.float64)
    b = r0["w0.bias"].astype(np.float64)
    for step in range(steps):
        x, y = X[step], Y[step]
        for rank, res in enumerate((r0, r1)):  # each rank's loss is over its half
            half = slice(rank * 4, rank * 4 + 4)
            local = np.mean((x[half] @ w + b - y[half]) ** 2)
            np.testing.assert_allclose(res["losses"][step], local, rtol=1e-5)
        err = x @ w + b - y
        w = w - 0.1 * (2 * x.T @ err / 8)
        b = b - 0.1 * (2 * err.sum(0) / 8)
    np.testing.assert_allclose(r0["w.weight"], w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(r0["w.bias"], b, rtol=1e-5, atol=1e-6)


def test_one_process_is_a_job_of_one(monkeypatch):
    for var in ("PADDLE_TRAINERS_NUM", "PADDLE_TRAINER_ID", "FLAGS_selected_gpus"):
        monkeypatch.delenv(var, raising=False)
    env = fluid.dygraph.ParallelEnv()
    assert (env.nranks, env.local_rank, env.dev_id) == (1, 0, 0)
    assert fluid.dygraph.parallel.Env is fluid.dygraph.ParallelEnv
    with fluid.dygraph.guard(fluid.CPUPlace()):
        strategy = fluid.dygraph.prepare_context()
        assert strategy.nranks == 1
        inner = fluid.dygraph.Linear(3, 2)
        model = fluid.dygraph.DataParallel(inner, strategy)
        x = fluid.dygraph.to_variable(np.ones((2, 3), "float32"))
        loss = fluid.layers.reduce_mean(model(x))
        assert model.scale_loss(loss) is loss
        loss.backward()
        model.apply_collective_grads()  # nothing to reduce
        # state_dict without the wrapper's prefix: checkpoints move between both
        assert list(model.state_dict()) == list(inner.state_dict())


def test_errors_name_data_parallel_and_the_user_line(monkeypatch):
    from oar.errors import ArgumentTypeError, OarError

    for var in ("PADDLE_TRAINERS_NUM", "PADDLE_TRAINER_ID"):
        monkeypatch.delenv(var, raising=False)
    with fluid.dygraph.guard(fluid.CPUPlace()):
        with pytest.raises(ArgumentTypeError) as info:
            fluid.dygraph.DataParallel(np.ones(3))  # not a Layer
        assert info.value.layer == "DataParallel" and "given ndarray" in str(info.value)
        assert info.value.callsite[0] == __file__
        model = fluid.dygraph.DataParallel(fluid.dygraph.Linear(3, 2))
        with pytest.raises(OarError) as info:
            model(fluid.dygraph.to_variable(np.ones((2, 4), "float32")))  # Linear wants 3 columns
        assert str(info.value).startswith("DataParallel: ")
        assert info.value.callsite[0] == __file__ and "model(" in info.value.callsite[3]


def test_env_reads_the_launch_variables(monkeypatch):
    monkeypatch.setenv("PADDLE_TRAINERS_NUM", "4")
    monkeypatch.setenv("PADDLE_TRAINER_ID", "2")
    monkeypatch.setenv("FLAGS_selected_gpus", "5")
    monkeypatch.setenv("PADDLE_TRAINER_ENDPOINTS", "a:1,a:2,b:1,b:2")
    monkeypatch.setenv("PADDLE_CURRENT_ENDPOINT", "b:1")
    env = fluid.dygraph.parallel.Env()
    assert (env.nranks, env.local_rank, env.dev_id) == (4, 2, 5)
    assert env.trainer_endpoints == ["a:1", "a:2", "b:1", "b:2"]
    assert env.current_endpoint == "b:1"
    monkeypatch.setenv("PADDLE_TRAINER_ID", "4")
    with pytest.raises(ValueError, match=r"PADDLE_TRAINER_ID must be in \[0, 4\).*given 4"):
        fluid.dygraph.ParallelEnv()


def test_a_job_of_two_without_the_launcher_says_how_to_start_it(monkeypatch):
    require_mpi()  # skips without mpi4py or an MPI library
    monkeypatch.setenv("PADDLE_TRAINERS_NUM", "2")
    monkeypatch.setenv("PADDLE_TRAINER_ID", "1")
    from oar_dist.collective import drop_ring

    drop_ring(0)
    try:
        with fluid.dygraph.guard(fluid.CPUPlace()):
            with pytest.raises(RuntimeError, match="oar.distributed.launch --nproc_per_node 2"):
                fluid.dygraph.prepare_context()
    finally:
        drop_ring(0)


def test_sparse_gradients_and_a_gradient_only_one_rank_has(tmp_path):
    out = tmp_path / "sp"
    run_launch(
        "--nproc_per_node", "2", "--log_dir", str(tmp_path / "logs"),
        str(SCRIPTS / "dygraph_dp_sparse.py"), str(out),
    )  # fmt: skip
    r0, r1 = (np.load(f"{out}.{r}.npz") for r in (0, 1))
    for key in ("w", "head"):
        np.testing.assert_array_equal(r0[key], r1[key])
    w0, head = r0["w0"].astype(np.float64), r0["head0"].astype(np.float64).ravel()
    # rank 0: loss = sum_b head . (sum of its rows); rank 1: loss = sum of its rows' entries;
    # each scaled by 1/2, summed over the ranks, SGD with lr 0.5
    grad = np.zeros_like(w0)
    for row in (1, 2, 2, 7):  # rank 0's ids
        grad[row] += 0.5 * head
    for row in (2, 5, 9, 9):  # rank 1's ids
        grad[row] += 0.5
    np.testing.assert_allclose(r0["w"], w0 - 0.5 * grad, rtol=1e-5, atol=1e-6)
    # the head's gradient exists on rank 0 only: rank 1 contributes zeros, both update alike
    h = np.array([w0[1] + w0[2], w0[2] + w0[7]])
    np.testing.assert_allclose(
        r0["head"].ravel(), head - 0.5 * 0.5 * h.sum(0), rtol=1e-5, atol=1e-6
    )
