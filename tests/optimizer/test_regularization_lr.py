"""Regularizers (optimizer-wide vs ParamAttr, seed 002's precedence rule) and per-parameter learning rates."""

import numpy as np
import pytest
from oar import fluid

rng = np.random.default_rng(11)
W0 = rng.uniform(-1, 1, (3, 2)).astype("float32")
B0 = rng.uniform(-1, 1, (2,)).astype("float32")
X = rng.uniform(-1, 1, (4, 3)).astype("float32")
Y = rng.uniform(-1, 1, (4, 2)).astype("float32")


def grads(w, b):
    d = 2 * (X @ w + b - Y) / Y.size
    return X.T @ d, d.sum(0)


def one_step(opt, w_attr=None, b_attr=None):
    """(w, b) after one minimize step of mean((x@w + b - y)**2)."""
    main, startup = fluid.Program(), fluid.Program()
    w_attr = w_attr or {}
    b_attr = b_attr or {}
    with fluid.program_guard(main, startup):
        x = fluid.layers.data("x", [3])
        y = fluid.layers.data("y", [2])
        pred = fluid.layers.fc(
            x,
            2,
            param_attr=fluid.ParamAttr(
                name="w", initializer=fluid.initializer.NumpyArrayInitializer(W0), **w_attr
            ),
            bias_attr=fluid.ParamAttr(
                name="b", initializer=fluid.initializer.NumpyArrayInitializer(B0), **b_attr
            ),
        )
        loss = fluid.layers.mean(fluid.layers.square(pred - y))
        opt.minimize(loss)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    exe.run(main, feed={"x": X, "y": Y}, scope=scope)
    return np.array(scope.find_var("w").value), np.array(scope.find_var("b").value)


def test_l2_and_l1_decay_numbers():
    gw, gb = grads(W0, B0)
    w, b = one_step(fluid.optimizer.SGD(0.1, regularization=fluid.regularizer.L2Decay(0.5)))
    np.testing.assert_allclose(w, W0 - 0.1 * (gw + 0.5 * W0), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(b, B0 - 0.1 * (gb + 0.5 * B0), rtol=1e-5, atol=1e-7)
    w, _ = one_step(
        fluid.optimizer.SGD(0.1, regularization=fluid.regularizer.L1DecayRegularizer(0.5))
    )
    np.testing.assert_allclose(w, W0 - 0.1 * (gw + 0.5 * np.sign(W0)), rtol=1e-5, atol=1e-7)


def test_param_attr_regularizer_overrides_the_optimizers():
    """Seed 002: a ParamAttr regularizer wins; parameters without one use the optimizer's."""
    gw, gb = grads(W0, B0)
    opt = fluid.optimizer.SGD(0.1, regularization=fluid.regularizer.L2Decay(0.5))
    w, b = one_step(opt, w_attr={"regularizer": fluid.regularizer.L1Decay(0.2)})
    np.testing.assert_allclose(w, W0 - 0.1 * (gw + 0.2 * np.sign(W0)), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(b, B0 - 0.1 * (gb + 0.5 * B0), rtol=1e-5, atol=1e-7)


def test_param_attr_regularizer_without_optimizer_regularization():
    gw, gb = grads(W0, B0)
    w, b = one_step(
        fluid.optimizer.SGD(0.1), w_attr={"regularizer": fluid.regularizer.L2Decay(0.3)}
    )
    np.testing.assert_allclose(w, W0 - 0.1 * (gw + 0.3 * W0), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(b, B0 - 0.1 * gb, rtol=1e-5, atol=1e-7)


def test_param_learning_rate_multiplies_and_zero_freezes():
    """Seed 002: the effective rate is optimizer lr * ParamAttr learning_rate; 0 keeps the layer fixed."""
    gw, gb = grads(W0, B0)
    w, b = one_step(
        fluid.optimizer.SGD(0.1), w_attr={"learning_rate": 2.0}, b_attr={"learning_rate": 0.0}
    )
    np.testing.assert_allclose(w, W0 - 0.2 * gw, rtol=1e-5, atol=1e-7)
    np.testing.assert_array_equal(b, B0)


@pytest.mark.parametrize(
    "make",
    [
        lambda: fluid.optimizer.Adam(0.1),
        lambda: fluid.optimizer.Momentum(0.1, 0.9),
        lambda: fluid.optimizer.RMSProp(0.1),
    ],
    ids=["adam", "momentum", "rmsprop"],
)
def test_zero_learning_rate_freezes_under_any_optimizer(make):
    w, b = one_step(make(), w_attr={"learning_rate": 0.0})
    np.testing.assert_array_equal(w, W0)
    assert np.abs(b - B0).max() > 1e-4


def test_regularizer_accepted_as_param_attr_shorthand():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.data("x", [3])
        fluid.layers.fc(x, 2, param_attr=fluid.regularizer.L2Decay(0.1))
    p = main.global_block().all_parameters()[0]
    assert isinstance(p.regularizer, fluid.regularizer.L2Decay)
    assert "L2Decay" in repr(p.regularizer)
