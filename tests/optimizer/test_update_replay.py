"""A dygraph optimizer's update pass replayed (oar.dygraph.update_replay): every optimizer it
covers takes bit for bit the steps of the full pipeline, with a schedule, with a parameter
that misses a gradient on some steps and across ``set_dict``; passes it must not replay
(gradient clip, regularization, a learning-rate multiplier, a subclass) run the pipeline."""

from __future__ import annotations

import numpy as np
import pytest
from oar import fluid
from oar.dygraph import update_replay

_rng = np.random.default_rng(7)
X = _rng.uniform(-1, 1, (8, 5)).astype("float32")
W1 = _rng.uniform(-0.5, 0.5, (5, 4)).astype("float32")
W2 = _rng.uniform(-0.5, 0.5, (4, 3)).astype("float32")

OPTIMIZERS = {
    "SGD": lambda lr, ps: fluid.optimizer.SGD(lr, parameter_list=ps),
    "Momentum": lambda lr, ps: fluid.optimizer.Momentum(lr, 0.9, parameter_list=ps),
    "Nesterov": lambda lr, ps: fluid.optimizer.Momentum(
        lr, 0.9, use_nesterov=True, parameter_list=ps
    ),
    "Adam": lambda lr, ps: fluid.optimizer.Adam(lr, parameter_list=ps),
    "Adamax": lambda lr, ps: fluid.optimizer.Adamax(lr, parameter_list=ps),
    "Adagrad": lambda lr, ps: fluid.optimizer.Adagrad(lr, parameter_list=ps),
    "RMSProp": lambda lr, ps: fluid.optimizer.RMSProp(lr, parameter_list=ps),
    "Adadelta": lambda lr, ps: fluid.optimizer.Adadelta(lr, parameter_list=ps),
}


@pytest.fixture
def replays(monkeypatch):
    """How many passes were replayed."""
    seen = []
    real = update_replay._Plan.replay

    def counting(self, params_grads):
        seen.append(len(params_grads))
        return real(self, params_grads)

    monkeypatch.setattr(update_replay._Plan, "replay", counting)
    return seen


def _train(make, steps=6, replay=True, lr=0.05, skip_w2_at=(), restore_at=None, **attr):
    """Params, accumulators and losses of a two-layer model trained ``steps`` steps."""
    if not replay:
        real_key = update_replay._key
        update_replay._key = lambda *a: None
    try:
        with fluid.dygraph.guard():
            init = fluid.initializer.NumpyArrayInitializer
            l1 = fluid.dygraph.Linear(
                5, 4, act="tanh", param_attr=fluid.ParamAttr(initializer=init(W1), **attr)
            )
            l2 = fluid.dygraph.Linear(4, 3, param_attr=fluid.ParamAttr(initializer=init(W2)))
            params = l1.parameters() + l2.parameters()
            rate = lr() if callable(lr) else lr
            opt = make(rate, params)
            x = fluid.dygraph.to_variable(X)
            losses, saved = [], None
            for step in range(steps):
                h = l1(x)
                out = h if step in skip_w2_at else l2(h)
                loss = fluid.layers.mean(fluid.layers.square(out - 0.2))
                loss.backward()
                opt.minimize(loss)
                l1.clear_gradients()
                l2.clear_gradients()
                losses.append(loss.numpy())
                if step == 1 and restore_at is not None:
                    saved = {k: v.numpy().copy() for k, v in opt.state_dict().items()}
                if step == restore_at:
                    opt.set_dict(saved)
            state = {k: v.numpy() for k, v in opt.state_dict().items() if hasattr(v, "numpy")}
            return [p.numpy() for p in params], state, losses
    finally:
        if not replay:
            update_replay._key = real_key


def _same(a, b):
    pa, sa, la = a
    pb, sb, lb = b
    for x, y in zip(pa + la, pb + lb, strict=True):
        np.testing.assert_array_equal(x, y)
    assert sa.keys() == sb.keys()
    for k in sa:
        np.testing.assert_array_equal(sa[k], sb[k])


@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_replayed_steps_equal_the_pipeline(name, replays):
    got = _train(OPTIMIZERS[name])
    # SGD has no accumulators: step 1 records, 2-6 replay; the others create theirs at step 1
    assert len(replays) == (5 if name == "SGD" else 4)
    _same(got, _train(OPTIMIZERS[name], replay=False))


def test_a_schedule_advances_under_replay(replays):
    def lr():
        return fluid.dygraph.PiecewiseDecay([2, 4], [0.1, 0.05, 0.01], 0)

    got = _train(OPTIMIZERS["Momentum"], lr=lr)
    assert replays
    _same(got, _train(OPTIMIZERS["Momentum"], lr=lr, replay=False))


def test_a_missing_gradient_and_set_dict(replays):
    kw = dict(skip_w2_at=(3,), restore_at=4)
    got = _train(OPTIMIZERS["Adam"], **kw)
    assert replays
    _same(got, _train(OPTIMIZERS["Adam"], replay=False, **kw))


@pytest.mark.parametrize(
    "make, attr",
    [
        (lambda lr, ps: fluid.optimizer.SGD(lr, parameter_list=ps, grad_clip=_clip()), {}),
        (
            lambda lr, ps: fluid.optimizer.SGD(
                lr, parameter_list=ps, regularization=fluid.regularizer.L2Decay(0.1)
            ),
            {},
        ),
        (OPTIMIZERS["SGD"], {"learning_rate": 2.0}),
        (OPTIMIZERS["SGD"], {"regularizer": fluid.regularizer.L1Decay(0.1)}),
        (lambda lr, ps: _MySGD(lr, parameter_list=ps), {}),
    ],
    ids=["clip", "regularization", "lr-multiplier", "param-regularizer", "subclass"],
)
def test_passes_that_are_not_replayed(make, attr, replays):
    got = _train(make, **attr)
    assert replays == []
    _same(got, _train(make, replay=False, **attr))


def _clip():
    return fluid.clip.GradientClipByGlobalNorm(0.5)


class _MySGD(fluid.optimizer.SGD):
    """A user's subclass: its passes may append anything, so they are never replayed."""
