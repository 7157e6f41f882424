"""Optimizers: minimize's result, per-parameter learning rates, frozen parameters, accumulators."""

from __future__ import annotations

import numpy as np
import pytest
from oar import fluid
from oar.framework.operator import OpRole


def net(param_attr=None, bias_attr=None):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        x = fluid.layers.data("x", shape=[2], dtype="float32")
        y = fluid.layers.fc(
            x, 1, param_attr=param_attr or fluid.initializer.Constant(1.0), bias_attr=bias_attr
        )
        loss = fluid.layers.mean(y)
    return main, startup, loss


FEED = {"x": np.array([[1.0, 2.0]], "float32")}


def step(main, startup, fetch, n=1):
    scope = fluid.Scope()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup, scope=scope)
    for _ in range(n):
        out = exe.run(main, feed=FEED, fetch_list=fetch, scope=scope)
    return out, scope


def test_minimize_returns_optimize_ops_and_params_grads():
    main, startup, loss = net()
    with fluid.program_guard(main, startup):
        ops, pg = fluid.optimizer.SGD(learning_rate=0.1).minimize(loss)
    assert [op.type for op in ops] == ["sgd", "sgd"]
    assert all(op.attr("op_role") == OpRole.Optimize for op in ops)
    assert sorted(p.name for p, _ in pg) == ["fc_0.b_0", "fc_0.w_0"]
    assert all(g.name == p.name + "@GRAD" for p, g in pg)
    (w,), _ = step(main, startup, ["fc_0.w_0"])
    np.testing.assert_allclose(w, [[0.9], [0.8]], rtol=1e-6)  # w - 0.1 * x


def test_param_attr_learning_rate_multiplies():
    main, startup, loss = net(
        param_attr=fluid.ParamAttr(initializer=fluid.initializer.Constant(1.0), learning_rate=0.5)
    )
    with fluid.program_guard(main, startup):
        fluid.optimizer.SGD(learning_rate=0.1).minimize(loss)
    (w, b), _ = step(main, startup, ["fc_0.w_0", "fc_0.b_0"])
    np.testing.assert_allclose(w, [[1 - 0.05], [1 - 0.1]], rtol=1e-6)
    np.testing.assert_allclose(b, [-0.1], rtol=1e-6)  # bias keeps the full rate


def test_trainable_false_is_excluded():
    main, startup, loss = net(
        param_attr=fluid.ParamAttr(initializer=fluid.initializer.Constant(1.0), trainable=False)
    )
    with fluid.program_guard(main, startup):
        ops, pg = fluid.optimizer.SGD(learning_rate=0.1).minimize(loss)
    assert [p.name for p, _ in pg] == ["fc_0.b_0"]
    assert len(ops) == 1
    (w,), _ = step(main, startup, ["fc_0.w_0"], n=3)
    np.testing.assert_array_equal(w, [[1.0], [1.0]])


def test_adam_accumulators_are_persistable_and_created_by_startup():
    main, startup, loss = net()
    with fluid.program_guard(main, startup):
        opt = fluid.optimizer.Adam(learning_rate=0.01)
        ops, pg = opt.minimize(loss)
    assert [op.type for op in ops if op.type == "adam"] == ["adam", "adam"]
    block = main.global_block()
    acc_names = set()
    for op in ops:
        if op.type == "adam":
            for slot in ("Moment1", "Moment2", "Beta1Pow", "Beta2Pow", "LearningRate"):
                acc_names.update(op.input(slot))
    assert len(acc_names) == 9  # 4 per parameter, one shared learning rate
    for n in acc_names:
        assert block.var(n).persistable, n
        assert any(n in op.output_arg_names for op in startup.global_block().ops), (
            f"{n} not initialised"
        )
    (w,), scope = step(main, startup, ["fc_0.w_0"], n=2)
    for n in acc_names:
        assert scope.find_var(n).is_initialized(), n
    b1p = [n for n in acc_names if "beta1_pow" in n][0]
    np.testing.assert_allclose(np.array(scope.find_var(b1p).get_tensor()), [0.9**3], rtol=1e-6)
    # the first Adam step moves every weight by about the learning rate
    assert np.all(w < 1.0) and np.all(w > 1.0 - 0.03)


def test_sgd_learning_rate_variable_is_persistable_and_in_startup():
    main, startup, loss = net()
    with fluid.program_guard(main, startup):
        fluid.optimizer.SGD(learning_rate=0.25).minimize(loss)
    lrs = [v for v in main.list_vars() if v.name.startswith("learning_rate")]
    assert len(lrs) == 1 and lrs[0].persistable
    _, scope = step(main, startup, [])
    np.testing.assert_allclose(np.array(scope.find_var(lrs[0].name).get_tensor()), [0.25])


def test_optimizer_argument_errors():
    with pytest.raises(TypeError, match="learning_rate must be a float or a Variable"):
        fluid.optimizer.SGD(learning_rate="0.1")
    with pytest.raises(ValueError, match="learning_rate must be >= 0"):
        fluid.optimizer.Adam(learning_rate=-1.0)
    with pytest.raises(TypeError, match="loss must be a Variable"):
        fluid.optimizer.SGD(0.1).minimize("loss")
