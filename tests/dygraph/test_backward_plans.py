"""The eager backward resolves each kind of tape node's grad ops once and reuses them: nodes of
one op type and attrs but another slot layout (which inputs stop gradients, which outputs
have one) must get plans of their own."""

from __future__ import annotations

import numpy as np
from oar import fluid
from oar.framework.mode import _dygraph_tracer


def _var(a, stop):
    v = fluid.dygraph.to_variable(np.asarray(a, "float32"))
    v.stop_gradient = stop
    return v


def _grad(v):
    return None if v._grad is None else np.asarray(v.gradient())


def test_same_op_with_other_inputs_stopping_gradients():
    a0, b0 = np.arange(6.0).reshape(2, 3), np.ones((2, 3)) * 2
    with fluid.dygraph.guard():
        for stops in ((False, True), (True, False), (False, False), (False, True)):
            a, b = _var(a0, stops[0]), _var(b0, stops[1])
            loss = fluid.layers.reduce_sum(fluid.layers.elementwise_mul(a, b))
            loss.backward()
            ga, gb = _grad(a), _grad(b)
            assert (ga is None) == stops[0] and (gb is None) == stops[1]
            if ga is not None:
                np.testing.assert_array_equal(ga, b0)
            if gb is not None:
                np.testing.assert_array_equal(gb, a0)
        plans = _dygraph_tracer()._grad_plans
        muls = {k[3] for k in plans if k[0] == "elementwise_mul"}
        assert len(muls) == 3  # one plan per layout, the repeated layout reused


def test_output_off_the_loss_path_gets_zeros_then_a_gradient():
    x0 = np.array([[1.0, -2.0, 3.0, 0.5]])
    with fluid.dygraph.guard():
        for use_both in (False, True, False):
            x = _var(x0, False)
            a, b = fluid.layers.split(x, 2, dim=1)
            loss = fluid.layers.reduce_sum(a * 3.0)
            if use_both:
                loss = loss + fluid.layers.reduce_sum(b)
            loss.backward()
            want = np.array([[3.0, 3.0, 1.0 if use_both else 0.0, 1.0 if use_both else 0.0]])
            np.testing.assert_array_equal(_grad(x), want)


def test_training_steps_match_a_fresh_tracer_each_step():
    """Ten SGD steps with cached plans equal ten steps where every backward starts with no
    plans."""
    rng = np.random.default_rng(0)
    x0 = rng.standard_normal((8, 5)).astype("float32")
    w0 = rng.standard_normal((5, 3)).astype("float32")

    def train(forget: bool):
        with fluid.dygraph.guard():
            init = fluid.initializer.NumpyArrayInitializer
            fc = fluid.dygraph.Linear(
                5, 3, act="relu", param_attr=fluid.ParamAttr(initializer=init(w0))
            )
            opt = fluid.optimizer.SGD(0.1, parameter_list=fc.parameters())
            x = fluid.dygraph.to_variable(x0)
            losses = []
            for _ in range(10):
                if forget:
                    _dygraph_tracer().__dict__.pop("_grad_plans", None)
                loss = fluid.layers.reduce_mean(fc(x) * fc(x))
                loss.backward()
                opt.minimize(loss)
                fc.clear_gradients()
                losses.append(float(loss.numpy()[0]))
            return losses, np.asarray(fc.weight.numpy())

    cached, fresh = train(False), train(True)
    assert cached[0] == fresh[0] and cached[0][0] != cached[0][-1]
    np.testing.assert_array_equal(cached[1], fresh[1])
