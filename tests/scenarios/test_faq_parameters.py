"""Seed 002 (parameter-tuning FAQ), each answer as a running check.

1. an embedding initialised from a local numpy matrix;  2. weights shared by
ParamAttr name;  3. a ParamAttr regularizer overrides the optimizer's, and the
effective rate is optimizer lr x ParamAttr learning_rate (0: not trained);
4. freezing: BN with use_global_stats, stages before a stop_gradient output;
5. the step advances once per exe.run.
"""

import numpy as np
import pytest
from oar import fluid
from oar.plugins import registries

rng = np.random.default_rng(21)


def needs(op):
    if op not in registries().ops:
        pytest.skip(f"op '{op}' is not defined yet (another helper's op)")


def run(main, startup, feeds, fetch, steps=1):
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    out = None
    for _ in range(steps):
        out = exe.run(main, feed=feeds, fetch_list=fetch)
    return exe, out


def value(name):
    return np.array(fluid.global_scope().find_var(name).value)


def test_embedding_initialised_from_numpy():
    needs("lookup_table")
    table = rng.normal(size=(10, 4)).astype("float32")
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        ids = fluid.layers.data(name="ids", shape=[1], dtype="int64")
        emb = fluid.layers.embedding(
            input=ids, size=[10, 4],
            param_attr=fluid.ParamAttr(name="word_embedding",
                                       initializer=fluid.initializer.NumpyArrayInitializer(table)))
    ids_np = np.array([[3], [0], [9]], "int64")
    _, (got,) = run(main, startup, {"ids": ids_np}, [emb])
    np.testing.assert_array_equal(got.reshape(3, 4), table[[3, 0, 9]])
    np.testing.assert_array_equal(value("word_embedding"), table)


def test_shared_weights_by_param_attr_name():
    main, startup = fluid.Program(), fluid.Program()
    w0 = rng.normal(size=(3, 2)).astype("float32")
    with fluid.program_guard(main, startup):
        input1 = fluid.layers.data(name="input1", shape=[3])
        input2 = fluid.layers.data(name="input2", shape=[3])
        fc1 = fluid.layers.fc(input=input1, size=2, param_attr=fluid.param_attr.ParamAttr(
            name="fc.w", initializer=fluid.initializer.NumpyArrayInitializer(w0)),
            bias_attr=fluid.param_attr.ParamAttr(name="fc.b"))
        fc2 = fluid.layers.fc(input=input2, size=2, param_attr=fluid.param_attr.ParamAttr(name="fc.w"),
                              bias_attr=fluid.param_attr.ParamAttr(name="fc.b"))
        loss = fluid.layers.mean(fc1 + fc2 * 3.0)
        fluid.optimizer.SGD(0.5).minimize(loss)
    assert sorted(p.name for p in main.all_parameters()) == ["fc.b", "fc.w"]
    x1, x2 = rng.normal(size=(4, 3)).astype("float32"), rng.normal(size=(4, 3)).astype("float32")
    run(main, startup, {"input1": x1, "input2": x2}, [])
    # d loss / d w = (x1.sum(0) + 3 x2.sum(0)) / 8 for each output column: both uses add up
    g = (x1.sum(0) + 3 * x2.sum(0)) / 8.0
    np.testing.assert_allclose(value("fc.w"), w0 - 0.5 * g[:, None], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(value("fc.b"), -0.5 * np.full(2, 4 * 4 / 8.0), rtol=1e-6)


def test_regularizer_precedence_and_learning_rate_multiplier():
    main, startup = fluid.Program(), fluid.Program()
    w0 = rng.normal(size=(3, 2)).astype("float32")
    v0 = rng.normal(size=(3, 2)).astype("float32")
    x = rng.normal(size=(5, 3)).astype("float32")
    with fluid.program_guard(main, startup):
        inp = fluid.layers.data(name="x", shape=[3])
        a = fluid.layers.fc(inp, 2, bias_attr=False, param_attr=fluid.ParamAttr(
            name="a", initializer=fluid.initializer.NumpyArrayInitializer(w0),
            regularizer=fluid.regularizer.L1Decay(0.3), learning_rate=2.0))
        b = fluid.layers.fc(inp, 2, bias_attr=False, param_attr=fluid.ParamAttr(
            name="b", initializer=fluid.initializer.NumpyArrayInitializer(v0), learning_rate=0.5))
        frozen = fluid.layers.fc(inp, 2, bias_attr=False, param_attr=fluid.ParamAttr(name="c", learning_rate=0.0))
        loss = fluid.layers.mean(a + b + frozen)
        fluid.optimizer.SGD(0.1, regularization=fluid.regularizer.L2Decay(0.5)).minimize(loss)
    exe, _ = run(main, startup, {"x": x}, [])
    c0 = value("c")
    exe.run(main, feed={"x": x})
    g = np.repeat((x.sum(0) / 10.0)[:, None], 2, axis=1)
    w1 = w0 - 0.2 * (g + 0.3 * np.sign(w0))  # ParamAttr's L1 wins; lr x 2
    v1 = v0 - 0.05 * (g + 0.5 * v0)  # no ParamAttr regularizer: the optimizer's L2; lr x 0.5
    np.testing.assert_allclose(value("a"), w1 - 0.2 * (g + 0.3 * np.sign(w1)), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(value("b"), v1 - 0.05 * (g + 0.5 * v1), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(value("c"), c0)  # learning_rate=0: the layer does not train


def test_stop_gradient_freezes_the_stages_before_it():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.data(name="x", shape=[4])
        stage1 = fluid.layers.fc(x, 8, act="relu", param_attr="s1.w", bias_attr="s1.b")
        y = fluid.layers.fc(stage1, 8, act="relu", param_attr="s2.w", bias_attr="s2.b")
        y.stop_gradient = True
        stage3 = fluid.layers.fc(y, 1, param_attr="s3.w", bias_attr="s3.b")
        loss = fluid.layers.mean(fluid.layers.square(stage3))
        _, params_grads = fluid.optimizer.Adam(0.01).minimize(loss)
    assert sorted(p.name for p, _ in params_grads) == ["s3.b", "s3.w"]
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    before = {n: value(n) for n in ("s1.w", "s1.b", "s2.w", "s2.b", "s3.w")}
    for _ in range(3):
        exe.run(main, feed={"x": rng.normal(size=(6, 4)).astype("float32")})
    for n in ("s1.w", "s1.b", "s2.w", "s2.b"):
        np.testing.assert_array_equal(value(n), before[n])
    assert np.abs(value("s3.w") - before["s3.w"]).max() > 0


def test_batch_norm_use_global_stats_keeps_the_loaded_statistics():
    needs("batch_norm")
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.data(name="x", shape=[3])
        h = fluid.layers.batch_norm(x, use_global_stats=True, moving_mean_name="bn.mean",
                                    moving_variance_name="bn.var", param_attr="bn.scale", bias_attr="bn.bias")
        loss = fluid.layers.mean(fluid.layers.square(h))
        fluid.optimizer.SGD(0.1).minimize(loss)
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    mean, var = np.array([1.0, -2.0, 0.5], "float32"), np.array([4.0, 1.0, 0.25], "float32")
    fluid.global_scope().find_var("bn.mean").value = fluid.LoDTensor(mean.copy())
    fluid.global_scope().find_var("bn.var").value = fluid.LoDTensor(var.copy())
    xs = rng.normal(size=(8, 3)).astype("float32") * 3
    (got,) = exe.run(main, feed={"x": xs}, fetch_list=[h])
    np.testing.assert_allclose(got, (xs - mean) / np.sqrt(var + 1e-5), rtol=1e-4, atol=1e-5)
    for _ in range(2):
        exe.run(main, feed={"x": xs})
    np.testing.assert_array_equal(value("bn.mean"), mean)
    np.testing.assert_array_equal(value("bn.var"), var)


def test_step_counts_exe_run_calls():
    """'each exe.run adds 1 to step': N mini-batches x epochs runs give N x epochs steps."""
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.data(name="x", shape=[2])
        loss = fluid.layers.mean(fluid.layers.fc(x, 1))
        lr = fluid.layers.exponential_decay(1.0, decay_steps=1, decay_rate=0.5)
        fluid.optimizer.SGD(lr).minimize(loss)
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    epochs, mini_batches = 3, [np.ones((2, 2), "float32")] * 4
    seen = []
    for _ in range(epochs):
        for data in mini_batches:
            seen.append(float(exe.run(main, feed={"x": data}, fetch_list=[lr])[0][0]))
    assert int(value("@LR_DECAY_COUNTER@")[0]) == len(mini_batches) * epochs - 1  # step of the last run
    np.testing.assert_allclose(seen, [0.5 ** t for t in range(12)])
