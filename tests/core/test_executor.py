"""Executor: cached plans, freed temporaries, fetch/feed forms, LoD, feed reshaping."""

from __future__ import annotations

import numpy as np
import pytest
from oar import fluid


def small_net():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        x = fluid.layers.data("x", shape=[3], dtype="float32")
        h = fluid.layers.fc(x, 4, act="relu", param_attr=fluid.initializer.Constant(0.1))
        out = fluid.layers.fc(h, 2, param_attr=fluid.initializer.Constant(0.2))
        loss = fluid.layers.mean(out)
    return main, startup, x, h, out, loss


X = np.array([[1, 2, 3], [4, 5, 6]], "float32")


def test_plan_is_cached_across_runs_and_rebuilt_when_the_program_changes():
    main, startup, x, h, out, loss = small_net()
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    r1 = exe.run(main, feed={"x": X}, fetch_list=[out], scope=scope)[0]
    key = (id(main), ("x",), (out.name,))
    plan = exe._plans[key][1]
    exe.run(main, feed={"x": X}, fetch_list=[out], scope=scope)
    assert exe._plans[key][1] is plan  # same plan reused
    # other fetches -> another plan; the first stays cached
    exe.run(main, feed={"x": X}, fetch_list=[loss], scope=scope)
    assert len([k for k in exe._plans if k[0] == id(main)]) == 2
    with fluid.program_guard(main, startup):
        doubled = fluid.layers.scale(out, scale=2.0)
    r2, d = exe.run(main, feed={"x": X}, fetch_list=[out, doubled], scope=scope)
    np.testing.assert_allclose(d, 2 * r1)
    exe.run(main, feed={"x": X}, fetch_list=[out], scope=scope)
    assert exe._plans[key][1] is not plan  # the program changed: rebuilt
    assert exe._plans[key][1].version == main._version


def test_temporaries_are_freed_after_their_last_use(monkeypatch):
    monkeypatch.setenv("OAR_DISABLE_FUSION", "1")  # plan steps = the block's ops, one for one
    main, startup, x, h, out, loss = small_net()
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    exe.run(main, feed={"x": X}, fetch_list=[loss], scope=scope)
    plan = exe._plans[(id(main), ("x",), (loss.name,))][1]
    freed = {n for names in plan.free_after.values() for n in names}
    assert h.name in freed and out.name in freed
    assert loss.name not in freed  # fetched
    assert "x" not in freed  # fed
    assert not any(p.name in freed for p in main.all_parameters())  # persistable
    # each temporary is freed right after the last op that reads it
    ops = main.global_block().ops
    for key, names in plan.free_after.items():
        op_type, idx = key.split("#")
        idx = int(idx)
        assert ops[idx].type == op_type
        for n in names:
            assert n in ops[idx].input_arg_names + ops[idx].output_arg_names
            assert not any(n in op.input_arg_names for op in ops[idx + 1 :])
    # temporaries never reach the scope
    assert scope.find_var(h.name) is None


def test_fetch_by_variable_or_name_and_persistables():
    main, startup, x, h, out, loss = small_net()
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    a, b, w = exe.run(main, feed={"x": X}, fetch_list=[out, out.name, "fc_0.w_0"], scope=scope)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(w, np.full((3, 4), 0.1, "float32"))
    # a single variable (not a list) is accepted too
    (c,) = exe.run(main, feed={"x": X}, fetch_list=out, scope=scope)
    np.testing.assert_array_equal(a, c)
    # relu(x @ 0.1 + 0) @ 0.2 + 0: each output is 4 * 0.2 * 0.1 * sum(x)
    np.testing.assert_allclose(a, np.repeat(0.08 * X.sum(1, keepdims=True), 2, axis=1), rtol=1e-6)


def test_fetched_persistable_is_a_copy():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        x = fluid.layers.data("x", shape=[1], dtype="float32")
        y = fluid.layers.fc(x, 1, param_attr=fluid.initializer.Constant(1.0), bias_attr=False)
        fluid.optimizer.SGD(0.5).minimize(fluid.layers.mean(y))
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    (w1,) = exe.run(
        main, feed={"x": np.ones((1, 1), "float32")}, fetch_list=["fc_0.w_0"], scope=scope
    )
    (w2,) = exe.run(
        main, feed={"x": np.ones((1, 1), "float32")}, fetch_list=["fc_0.w_0"], scope=scope
    )
    assert w1[0, 0] == pytest.approx(0.5) and w2[0, 0] == pytest.approx(0.0)


def test_feed_lod_tensor_and_return_numpy_false_keeps_lod():
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        x = fluid.layers.data("x", shape=[1], dtype="float32", lod_level=1)
        y = fluid.layers.scale(x, scale=3.0)
    t = fluid.create_lod_tensor(
        np.arange(5, dtype="float32").reshape(5, 1), [[2, 3]], fluid.CPUPlace()
    )
    exe = fluid.Executor(fluid.CPUPlace())
    (res,) = exe.run(main, feed={"x": t}, fetch_list=[y], return_numpy=False, scope=fluid.Scope())
    assert isinstance(res, fluid.LoDTensor)
    assert res.recursive_sequence_lengths() == [[2, 3]]
    np.testing.assert_allclose(np.array(res).ravel(), [0, 3, 6, 9, 12])
    (arr,) = exe.run(main, feed={"x": t}, fetch_list=[y], scope=fluid.Scope())
    assert isinstance(arr, np.ndarray) and arr.shape == (5, 1)


def test_layers_data_feed_is_reshaped_to_the_declared_rank():
    """The seed feeds a (1, 4, 1) array to a data layer of shape [-1, 4]."""
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        x = fluid.layers.data(name="x", shape=[4], dtype="float32")
        y = fluid.layers.scale(x, scale=1.0)
    test = np.array([[[9], [5], [2], [10]]]).astype("float32")
    (out,) = fluid.Executor(fluid.CPUPlace()).run(
        main, feed={"x": test}, fetch_list=[y], scope=fluid.Scope()
    )
    assert out.shape == (1, 4)
    np.testing.assert_array_equal(out, [[9, 5, 2, 10]])


def test_fluid_data_feed_is_checked_exactly():
    from oar.errors import FeedError

    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        x = fluid.data(name="x", shape=[None, 4], dtype="float32")
        y = fluid.layers.scale(x, scale=1.0)
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(main, feed={"x": np.zeros((3, 4), "float32")}, fetch_list=[y], scope=fluid.Scope())
    with pytest.raises(FeedError, match="feed 'x' has shape \\[1, 4, 1\\].*expects \\[-1, 4\\]"):
        exe.run(
            main, feed={"x": np.zeros((1, 4, 1), "float32")}, fetch_list=[y], scope=fluid.Scope()
        )


def test_feed_that_cannot_fit_is_rejected():
    from oar.errors import FeedError

    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        x = fluid.layers.data(name="x", shape=[4], dtype="float32")
        y = fluid.layers.scale(x, scale=1.0)
    with pytest.raises(FeedError, match="feed 'x' has shape \\[2, 3\\].*expects \\[-1, 4\\]"):
        fluid.Executor(fluid.CPUPlace()).run(
            main, feed={"x": np.zeros((2, 3), "float32")}, fetch_list=[y], scope=fluid.Scope()
        )


def test_feeding_lists_converts_to_the_declared_dtype():
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        x = fluid.layers.data(name="x", shape=[2], dtype="float32")
        y = fluid.layers.scale(x, scale=2.0)
    (out,) = fluid.Executor(fluid.CPUPlace()).run(
        main, feed={"x": [[1, 2]]}, fetch_list=[y], scope=fluid.Scope()
    )
    assert out.dtype == np.float32 and out.tolist() == [[2.0, 4.0]]


def test_persistables_written_back_to_scope_and_startup_creates_them():
    main, startup, *_ = small_net()
    scope = fluid.Scope()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup, scope=scope)
    for p in main.all_parameters():
        assert scope.find_var(p.name).is_initialized(), p.name


def test_closed_executor_refuses_to_run():
    exe = fluid.Executor(fluid.CPUPlace())
    exe.close()
    with pytest.raises(RuntimeError, match="closed"):
        exe.run(fluid.Program())


def test_feeding_never_changes_the_callers_array():
    """A fed variable that an op updates in place (sgd's ParamOut is Param) is copied first."""
    main = fluid.Program()
    block = main.global_block()
    for name in ("param", "lr", "grad"):
        block.create_var(
            name=name, shape=[3] if name != "lr" else [1], dtype="float32", is_data=True
        )
    block.append_op(
        "sgd",
        {"Param": ["param"], "LearningRate": ["lr"], "Grad": ["grad"]},
        {"ParamOut": ["param"]},
    )
    p = np.ones(3, "float32")
    (out,) = fluid.Executor(fluid.CPUPlace()).run(
        main,
        feed={"param": p, "lr": np.array([0.5], "float32"), "grad": np.ones(3, "float32")},
        fetch_list=["param"],
        scope=fluid.Scope(),
    )
    np.testing.assert_array_equal(out, [0.5, 0.5, 0.5])
    np.testing.assert_array_equal(p, [1, 1, 1])
