"""with_data_parallel / ParallelExecutor on CPU places: per-place fetches, gradient scaling,
per-place feed lists, even splitting, share_vars_from, identical parameters on every place."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from oar import fluid
from oar.errors import FeedError

pytest.importorskip("oar_dist")

LR = 0.1
W0 = np.array([[0.5], [-0.25], [1.0]], "float32")


def linear_model(optimizer=None):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.data("x", [3])
        y = fluid.layers.data("y", [1])
        pred = fluid.layers.fc(
            x,
            1,
            param_attr=fluid.ParamAttr(
                name="w", initializer=fluid.initializer.NumpyArrayInitializer(W0)
            ),
            bias_attr=False,
        )
        loss = fluid.layers.mean(fluid.layers.square(pred - y))
        (optimizer or fluid.optimizer.SGD(LR)).minimize(loss)
    return main, startup, loss, pred


def grad(x, y, w):
    """d mean((xw - y)^2) / dw."""
    return 2 * x.T @ (x @ w - y) / len(x)


def data(n, seed=0):
    rng = np.random.RandomState(seed)
    return rng.rand(n, 3).astype("float32"), rng.rand(n, 1).astype("float32")


def place_scopes(compiled):
    return compiled._runner._scopes


def param_on_places(compiled, name="w"):
    return [np.array(s.find_var(name).get_tensor()) for s in place_scopes(compiled)]


@pytest.fixture
def scope():
    s = fluid.Scope()
    with fluid.scope_guard(s):
        yield s


@pytest.mark.parametrize("strategy", ["CoeffNumDevice", "One"])
def test_fetches_per_place_and_gradient_scaling_against_numpy(scope, strategy):
    main, startup, loss, pred = linear_model()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    bs = fluid.BuildStrategy()
    bs.gradient_scale_strategy = getattr(fluid.BuildStrategy.GradientScaleStrategy, strategy)
    compiled = fluid.CompiledProgram(main).with_data_parallel(
        loss_name=loss.name, build_strategy=bs, places=fluid.cpu_places(2)
    )
    x, y = data(6)
    loss_v, pred_v = exe.run(compiled, feed={"x": x, "y": y}, fetch_list=[loss, pred])
    halves = [(x[:3], y[:3]), (x[3:], y[3:])]
    # one mean loss per place, each over that place's half; predictions concatenated on axis 0
    assert loss_v.shape == (2,)
    np.testing.assert_allclose(loss_v, [np.mean((a @ W0 - b) ** 2) for a, b in halves], rtol=1e-5)
    np.testing.assert_allclose(pred_v, x @ W0, rtol=1e-5)
    g = [grad(a, b, W0) for a, b in halves]
    update = (g[0] + g[1]) / 2 if strategy == "CoeffNumDevice" else g[0] + g[1]
    for w in param_on_places(compiled):
        np.testing.assert_allclose(w, W0 - LR * update, rtol=1e-5, atol=1e-7)


def test_customized_scale_uses_the_fed_loss_gradient(scope):
    main, startup, loss, _ = linear_model()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    bs = fluid.BuildStrategy()
    bs.gradient_scale_strategy = fluid.BuildStrategy.GradientScaleStrategy.Customized
    compiled = fluid.CompiledProgram(main).with_data_parallel(
        loss_name=loss.name, build_strategy=bs, places=fluid.cpu_places(2)
    )
    x, y = data(4)
    seeds = [0.25, 0.75]
    feeds = [
        {"x": x[:2], "y": y[:2], loss.name + "@GRAD": np.array([seeds[0]], "float32")},
        {"x": x[2:], "y": y[2:], loss.name + "@GRAD": np.array([seeds[1]], "float32")},
    ]
    exe.run(compiled, feed=feeds, fetch_list=[loss])
    update = seeds[0] * grad(x[:2], y[:2], W0) + seeds[1] * grad(x[2:], y[2:], W0)
    np.testing.assert_allclose(
        scope.find_var("w").get_tensor().__array__(), W0 - LR * update, rtol=1e-5
    )
    with pytest.raises(FeedError, match="Customized.*'mean_0.tmp_0@GRAD'.*feed 0"):
        exe.run(compiled, feed={"x": x, "y": y}, fetch_list=[loss])


def test_per_place_feed_list_of_different_sizes(scope):
    main, startup, loss, pred = linear_model()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    compiled = fluid.CompiledProgram(main).with_data_parallel(
        loss_name=loss.name, places=fluid.cpu_places(2)
    )
    x, y = data(48, seed=3)
    feeds = [{"x": x[:32], "y": y[:32]}, {"x": x[32:], "y": y[32:]}]
    loss_v, pred_v = exe.run(compiled, feed=feeds, fetch_list=[loss, pred])
    assert pred_v.shape == (48, 1)
    np.testing.assert_allclose(
        loss_v,
        [np.mean((x[:32] @ W0 - y[:32]) ** 2), np.mean((x[32:] @ W0 - y[32:]) ** 2)],
        rtol=1e-5,
    )
    update = (grad(x[:32], y[:32], W0) + grad(x[32:], y[32:], W0)) / 2
    w0, w1 = param_on_places(compiled)
    np.testing.assert_array_equal(w0, w1)
    np.testing.assert_allclose(w0, W0 - LR * update, rtol=1e-5, atol=1e-7)


def test_places_stay_identical_over_steps_and_match_one_process(scope):
    """Adam over several steps: every place ends with the same parameters, equal to a single place
    on the whole batch (equal shares and a mean loss: mean of the places' gradients)."""
    x, y = data(64, seed=5)

    def train(places):
        s = fluid.Scope()
        with fluid.scope_guard(s), fluid.unique_name.guard():
            main, startup, loss, _ = linear_model(fluid.optimizer.Adam(0.05))
            exe = fluid.Executor(fluid.CPUPlace())
            exe.run(startup)
            prog = fluid.CompiledProgram(main)
            if places > 1:
                prog = prog.with_data_parallel(loss_name=loss.name, places=fluid.cpu_places(places))
            for step in range(5):
                sl = slice(16 * (step % 4), 16 * (step % 4) + 16)
                exe.run(prog, feed={"x": x[sl], "y": y[sl]}, fetch_list=[loss])
            return prog, np.array(s.find_var("w").get_tensor())

    _, single = train(1)
    prog, multi = train(2)
    w = param_on_places(prog)
    np.testing.assert_array_equal(w[0], w[1])
    np.testing.assert_allclose(multi, single, rtol=1e-5, atol=1e-6)
    assert not np.allclose(multi, W0)


def test_fused_and_per_tensor_allreduce_agree(scope):
    x = np.random.RandomState(1).rand(8, 6).astype("float32")
    results = []
    for fuse in (True, False):
        s = fluid.Scope()
        with fluid.scope_guard(s), fluid.unique_name.guard():
            main, startup = fluid.Program(), fluid.Program()
            main.random_seed = startup.random_seed = 7
            with fluid.program_guard(main, startup):
                inp = fluid.layers.data("x", [6])
                h = fluid.layers.fc(inp, 5, act="relu")
                loss = fluid.layers.mean(fluid.layers.fc(h, 2))
                fluid.optimizer.SGD(0.1).minimize(loss)
            exe = fluid.Executor(fluid.CPUPlace())
            exe.run(startup)
            bs = fluid.BuildStrategy()
            bs.fuse_all_reduce_ops = fuse
            prog = fluid.CompiledProgram(main).with_data_parallel(
                loss_name=loss.name, build_strategy=bs, places=fluid.cpu_places(2)
            )
            exe.run(prog, feed={"x": x})
            ops = [op.type for op in prog._runner._program.global_block().ops]
            assert ("c_fused_allreduce_sum" in ops) == fuse
            assert ops.count("c_allreduce_sum") == (0 if fuse else 4)
            results.append(
                [np.array(s.find_var(p.name).get_tensor()) for p in main.all_parameters()]
            )
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_uneven_or_small_batches_and_wrong_feed_lists_are_clear_errors(scope):
    main, startup, loss, _ = linear_model()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    compiled = fluid.CompiledProgram(main).with_data_parallel(
        loss_name=loss.name, places=fluid.cpu_places(2)
    )
    x, y = data(5)
    with pytest.raises(
        FeedError, match="feed 'x' has batch size 5, which does not split evenly over 2"
    ):
        exe.run(compiled, feed={"x": x, "y": y}, fetch_list=[loss])
    with pytest.raises(FeedError, match="batch size 1, which does not split evenly"):
        exe.run(compiled, feed={"x": x[:1], "y": y[:1]}, fetch_list=[loss])
    with pytest.raises(FeedError, match="feed list has 3 dicts but the program runs on 2 places"):
        exe.run(compiled, feed=[{"x": x, "y": y}] * 3, fetch_list=[loss])
    # a failing place does not hang the others: the error (with its place) comes back
    bad = [{"x": x[:2], "y": y[:2]}, {"x": x[:2].astype("float64"), "y": y[:2]}]
    with pytest.raises(FeedError, match="expects dtype float32") as info:
        exe.run(compiled, feed=bad, fetch_list=[loss])
    assert "on place 1 of 2" in "".join(getattr(info.value, "__notes__", []))
    # and the next step works
    out = exe.run(compiled, feed={"x": x[:4], "y": y[:4]}, fetch_list=[loss])
    assert out[0].shape == (2,)


def test_share_vars_from_reads_the_training_parameters(scope):
    main, startup, loss, pred = linear_model()
    test_prog = main.clone(for_test=True)
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    train = fluid.CompiledProgram(main).with_data_parallel(
        loss_name=loss.name, places=fluid.cpu_places(2)
    )
    test = fluid.CompiledProgram(test_prog).with_data_parallel(
        share_vars_from=train, places=fluid.cpu_places(2)
    )
    x, y = data(4)
    with pytest.raises(ValueError, match="share_vars_from.*has not run"):
        exe.run(test, feed={"x": x, "y": y}, fetch_list=[pred])
    for _ in range(3):
        exe.run(train, feed={"x": x, "y": y}, fetch_list=[loss])
    w = np.array(scope.find_var("w").get_tensor())
    assert not np.allclose(w, W0)
    (p,) = exe.run(test, feed={"x": x, "y": y}, fetch_list=[pred])
    np.testing.assert_allclose(p, x @ w, rtol=1e-5)
    with pytest.raises(TypeError, match="share_vars_from must be a CompiledProgram"):
        fluid.CompiledProgram(test_prog).with_data_parallel(share_vars_from=main)


def test_parallel_executor_with_cpu_num(scope, monkeypatch):
    monkeypatch.setenv("CPU_NUM", "2")
    main, startup, loss, pred = linear_model()
    test_prog = main.clone(for_test=True)
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    pe = fluid.ParallelExecutor(use_cuda=False, loss_name=loss.name, main_program=main)
    assert pe.device_count == 2
    x, y = data(4)
    (loss_v,) = pe.run(fetch_list=[loss.name], feed={"x": x, "y": y})
    assert loss_v.shape == (2,)
    test_pe = fluid.ParallelExecutor(use_cuda=False, main_program=test_prog, share_vars_from=pe)
    (p,) = test_pe.run(fetch_list=[pred.name], feed={"x": x, "y": y})
    np.testing.assert_allclose(p, x @ np.array(scope.find_var("w").get_tensor()), rtol=1e-5)
    with pytest.raises(TypeError, match="share_vars_from must be a ParallelExecutor"):
        fluid.ParallelExecutor(use_cuda=False, main_program=test_prog, share_vars_from=main)


def test_one_place_with_a_list_of_two_feeds_is_an_error(scope):
    main, startup, loss, _ = linear_model()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    compiled = fluid.CompiledProgram(main).with_data_parallel(
        loss_name=loss.name, places=fluid.cpu_places(1)
    )
    x, y = data(4)
    with pytest.raises(FeedError, match="list of 2 feed dicts needs as many places"):
        exe.run(compiled, feed=[{"x": x, "y": y}] * 2, fetch_list=[loss])


FLUID_BUILD = {
    "async_mode": False,
    "cache_runtime_context": False,
    "debug_graphviz_path": "",
    "enable_auto_fusion": False,
    "enable_backward_optimizer_op_deps": True,
    "enable_inplace": True,
    "enable_sequential_execution": False,
    "fuse_all_optimizer_ops": False,
    "fuse_all_reduce_ops": True,
    "fuse_bn_act_ops": False,
    "fuse_broadcast_ops": True,
    "fuse_elewise_add_act_ops": False,
    "fuse_relu_depthwise_conv": False,
    "gradient_scale_strategy": 0,
    "hierarchical_allreduce_inter_nranks": 0,
    "is_distribution": False,
    "memory_optimize": None,
    "mkldnn_enabled_op_types": set(),
    "nccl_comm_num": 1,
    "num_trainers": 1,
    "reduce_strategy": 0,
    "remove_unnecessary_lock": True,
    "sync_batch_norm": False,
    "trainer_id": 0,
    "trainers_endpoints": [],
    "use_hierarchical_allreduce": False,
}
FLUID_EXEC = {
    "allow_op_delay": False,
    "num_iteration_per_drop_scope": 100,
    "num_iteration_per_run": 1,
    "num_threads": 0,
    "use_cuda": True,
    "use_experimental_executor": True,
    "use_thread_barrier": False,
}


def test_strategies_have_every_fluid_18_attribute_with_its_default():
    """The names and defaults of Fluid 1.8.5's BuildStrategy / ExecutionStrategy (dir() of the oracle)."""
    bs, es = fluid.BuildStrategy(), fluid.ExecutionStrategy()
    assert {k: getattr(bs, k) for k in FLUID_BUILD} == FLUID_BUILD
    assert {k: getattr(es, k) for k in FLUID_EXEC} == FLUID_EXEC
    bs.fuse_all_optimizer_ops = True  # accepted (Fluid's graph pass; no effect in oar)
    bs.reduce_strategy = fluid.BuildStrategy.ReduceStrategy.Reduce
    with pytest.raises(ValueError, match="GradientScaleStrategy must be one of"):
        bs.gradient_scale_strategy = 7
    with pytest.raises(AttributeError):
        bs.no_such_option = 1


def test_without_oar_dist_more_than_one_place_names_the_plugin():
    code = (
        "import numpy as np\n"
        "from oar import fluid\n"
        "from oar.errors import MissingPluginError\n"
        "x = fluid.layers.data('x', [3])\n"
        "loss = fluid.layers.mean(fluid.layers.fc(x, 1))\n"
        "fluid.optimizer.SGD(0.1).minimize(loss)\n"
        "exe = fluid.Executor(fluid.CPUPlace()); exe.run(fluid.default_startup_program())\n"
        "one = fluid.CompiledProgram(fluid.default_main_program()).with_data_parallel(\n"
        "    loss_name=loss.name, places=fluid.cpu_places(1))\n"
        "print('ONE', exe.run(one, feed={'x': np.ones((2, 3), 'float32')}, fetch_list=[loss])[0].shape)\n"
        "two = fluid.CompiledProgram(fluid.default_main_program()).with_data_parallel(\n"
        "    loss_name=loss.name, places=fluid.cpu_places(2))\n"
        "try:\n"
        "    exe.run(two, feed={'x': np.ones((2, 3), 'float32')}, fetch_list=[loss])\n"
        "except MissingPluginError as e:\n"
        "    print('MISSING', e)\n"
    )
    env = dict(os.environ, OAR_DISABLE_PLUGINS="dist")
    r = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env
    )
    assert r.returncode == 0, r.stderr
    assert "ONE (1,)" in r.stdout
    assert "MISSING" in r.stdout and "2 places" in r.stdout and "pip install oar-dist" in r.stdout


def test_a_lod_feed_is_split_by_sequences(scope):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        words = fluid.layers.data("words", [2], lod_level=1)
        pooled = fluid.layers.sequence_pool(words, "sum")
        pred = fluid.layers.fc(
            pooled,
            1,
            param_attr=fluid.ParamAttr(
                name="w", initializer=fluid.initializer.NumpyArrayInitializer(W0[:2])
            ),
            bias_attr=False,
        )
        loss = fluid.layers.mean(pred)
        fluid.optimizer.SGD(LR).minimize(loss)
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    compiled = fluid.CompiledProgram(main).with_data_parallel(
        loss_name=loss.name, places=fluid.cpu_places(2)
    )
    rows = np.arange(20, dtype="float32").reshape(10, 2) / 10
    lens = [1, 3, 2, 4]  # 4 sequences: places get [1, 3] (4 rows) and [2, 4] (6 rows)
    t = fluid.create_lod_tensor(rows, [lens], fluid.CPUPlace())
    (p,) = exe.run(compiled, feed={"words": t}, fetch_list=[pred])
    sums = np.add.reduceat(rows, [0, 1, 4, 6])
    np.testing.assert_allclose(p, sums @ W0[:2], rtol=1e-5)
    # d mean(pred)/dw per place is the mean of its sequences' sums; the update is their mean
    g = (sums[:2].mean(0) + sums[2:].mean(0)) / 2
    np.testing.assert_allclose(
        np.array(scope.find_var("w").get_tensor()).ravel(), W0[:2].ravel() - LR * g, rtol=1e-5
    )
    odd = fluid.create_lod_tensor(rows[:4], [[1, 2, 1]], fluid.CPUPlace())
    with pytest.raises(FeedError, match="3 sequences, which do not split evenly over 2"):
        exe.run(compiled, feed={"words": odd}, fetch_list=[pred])


def test_a_parameter_set_between_steps_reaches_every_place(scope):
    """Loading a checkpoint (or any set()) after data-parallel steps must not leave the other
    places on their old copies."""
    main, startup, loss, pred = linear_model()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    compiled = fluid.CompiledProgram(main).with_data_parallel(
        loss_name=loss.name, places=fluid.cpu_places(2)
    )
    x, y = data(4)
    exe.run(compiled, feed={"x": x, "y": y}, fetch_list=[loss])
    new_w = np.full((3, 1), 2.0, "float32")
    scope.find_var("w").get_tensor().set(new_w, fluid.CPUPlace())
    (p,) = exe.run(compiled, feed={"x": x, "y": y}, fetch_list=[pred])
    np.testing.assert_allclose(p, x @ new_w, rtol=1e-6)  # both halves predicted with new_w
    w0, w1 = param_on_places(compiled)
    np.testing.assert_array_equal(w0, w1)
