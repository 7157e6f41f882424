"""Optimizers in dygraph mode: every optimizer (default and non-default arguments) and gradient
clip takes the same steps as in the static graph."""

from __future__ import annotations

import numpy as np
import pytest
from oar import fluid
from oar import optimizer as opt_mod

# --- every optimizer and gradient clip: dygraph steps equal the static executor's

_rng = np.random.default_rng(4)
X_8x5 = _rng.uniform(-1, 1, (8, 5)).astype("float32")
W = _rng.uniform(-0.5, 0.5, (5, 3)).astype("float32")
B = _rng.uniform(-0.1, 0.1, 3).astype("float32")

# constructor kwargs per optimizer (those not installed yet are skipped)
KWARGS = {
    "SGD": {"learning_rate": 0.1},
    "Adam": {"learning_rate": 0.05},
    "Momentum": {"learning_rate": 0.1, "momentum": 0.9},
    "LarsMomentum": {"learning_rate": 0.1, "momentum": 0.9},
    "Adagrad": {"learning_rate": 0.1},
    "DecayedAdagrad": {"learning_rate": 0.1},
    "RMSProp": {"learning_rate": 0.05},
    "Adamax": {"learning_rate": 0.05},
    "Adadelta": {"learning_rate": 0.5},
    "Ftrl": {"learning_rate": 0.1},
    "Lamb": {"learning_rate": 0.05},
}
NAMES = [n for n in KWARGS if hasattr(opt_mod, n)]


def _static(make_opt, steps=3):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.data(name="x", shape=[5], dtype="float32")
        init = fluid.initializer.NumpyArrayInitializer
        y = fluid.layers.fc(
            x,
            3,
            param_attr=fluid.ParamAttr(name="w", initializer=init(W)),
            bias_attr=fluid.ParamAttr(name="b", initializer=init(B)),
        )
        loss = fluid.layers.mean(fluid.layers.square(y - 0.3))
        make_opt(None).minimize(loss)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    losses = [
        exe.run(main, feed={"x": X_8x5}, fetch_list=[loss], scope=scope)[0] for _ in range(steps)
    ]
    return losses, np.array(scope.find_var("w").get_tensor())


def _dygraph(make_opt, steps=3):
    with fluid.dygraph.guard():
        init = fluid.initializer.NumpyArrayInitializer
        lin = fluid.dygraph.Linear(
            5,
            3,
            param_attr=fluid.ParamAttr(initializer=init(W)),
            bias_attr=fluid.ParamAttr(initializer=init(B)),
        )
        opt = make_opt(lin.parameters())
        losses = []
        for _ in range(steps):
            loss = fluid.layers.mean(
                fluid.layers.square(lin(fluid.dygraph.to_variable(X_8x5)) - 0.3)
            )
            loss.backward()
            opt.minimize(loss)
            lin.clear_gradients()
            losses.append(loss.numpy())
        return losses, lin.weight.numpy()


@pytest.mark.parametrize("name", NAMES)
def test_optimizer_dygraph_equals_static(name):
    cls = getattr(opt_mod, name)

    def make(params):
        kw = dict(KWARGS[name], regularization=fluid.regularizer.L2Decay(0.01))
        return cls(**kw) if params is None else cls(parameter_list=params, **kw)

    s_losses, s_w = _static(make)
    d_losses, d_w = _dygraph(make)
    np.testing.assert_allclose(np.ravel(d_losses), np.ravel(s_losses), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(d_w, s_w, rtol=1e-5, atol=1e-6)
    assert not np.allclose(d_w, W)


CLIPS = [
    n
    for n in ("GradientClipByValue", "GradientClipByNorm", "GradientClipByGlobalNorm")
    if hasattr(fluid.clip, n)
]
CLIP_ARGS = {
    "GradientClipByValue": {"max": 0.01},
    "GradientClipByNorm": {"clip_norm": 0.01},
    "GradientClipByGlobalNorm": {"clip_norm": 0.01},
}


@pytest.mark.parametrize("name", CLIPS)
def test_grad_clip_dygraph_equals_static(name):
    clip = getattr(fluid.clip, name)(**CLIP_ARGS[name])

    def make(params):
        if params is None:
            return fluid.optimizer.SGD(learning_rate=1.0, grad_clip=clip)
        return fluid.optimizer.SGD(learning_rate=1.0, parameter_list=params, grad_clip=clip)

    try:
        s_losses, s_w = _static(make)
    except TypeError:
        pytest.skip("this optimizer does not take grad_clip= yet")
    d_losses, d_w = _dygraph(make)
    np.testing.assert_allclose(d_w, s_w, rtol=1e-5, atol=1e-6)
    assert np.abs(d_w - W).max() <= 0.03 + 1e-6


# --- optimizers with non-default arguments, and a clip, in dygraph and static

OPT = fluid.optimizer
rng = np.random.default_rng(3)
W0 = rng.uniform(-1, 1, (3, 2)).astype("float32")
X = rng.uniform(-1, 1, (4, 3)).astype("float32")
Y = rng.uniform(-1, 1, (4, 2)).astype("float32")

MAKERS = {
    "Momentum": lambda pl: OPT.Momentum(0.1, 0.9, use_nesterov=True, parameter_list=pl),
    "LarsMomentum": lambda pl: OPT.LarsMomentum(0.1, 0.9, lars_coeff=0.05, parameter_list=pl),
    "Adagrad": lambda pl: OPT.Adagrad(0.1, parameter_list=pl),
    "DecayedAdagrad": lambda pl: OPT.DecayedAdagrad(0.1, parameter_list=pl),
    "RMSProp": lambda pl: OPT.RMSProp(0.01, centered=True, momentum=0.3, parameter_list=pl),
    "Adamax": lambda pl: OPT.Adamax(0.1, parameter_list=pl),
    "Adadelta": lambda pl: OPT.Adadelta(0.1, parameter_list=pl),
    "Ftrl": lambda pl: OPT.Ftrl(0.1, l1=0.01, l2=0.01, parameter_list=pl),
    "Lamb": lambda pl: OPT.Lamb(0.1, parameter_list=pl),
    "SGD+L2+global_norm_clip": lambda pl: OPT.SGD(
        0.1,
        parameter_list=pl,
        regularization=fluid.regularizer.L2Decay(0.1),
        grad_clip=fluid.clip.GradientClipByGlobalNorm(0.05),
    ),
}


def static_steps(make, steps=3):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.data("x", [3])
        y = fluid.layers.data("y", [2])
        pred = fluid.layers.fc(
            x,
            2,
            bias_attr=False,
            param_attr=fluid.ParamAttr(
                name="w", initializer=fluid.initializer.NumpyArrayInitializer(W0)
            ),
        )
        make(None).minimize(fluid.layers.mean(fluid.layers.square(pred - y)))
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    for _ in range(steps):
        exe.run(main, feed={"x": X, "y": Y}, scope=scope)
    return np.array(scope.find_var("w").value)


def dygraph_steps(make, steps=3):
    with fluid.dygraph.guard():
        lin = fluid.dygraph.Linear(
            3,
            2,
            bias_attr=False,
            param_attr=fluid.ParamAttr(initializer=fluid.initializer.NumpyArrayInitializer(W0)),
        )
        opt = make(lin.parameters())
        for _ in range(steps):
            pred = lin(fluid.dygraph.to_variable(X))
            loss = fluid.layers.mean(fluid.layers.square(pred - fluid.dygraph.to_variable(Y)))
            loss.backward()
            opt.minimize(loss)
            lin.clear_gradients()
        return lin.weight.numpy()


@pytest.mark.parametrize("name", list(MAKERS))
def test_dygraph_matches_static(name):
    w_static = static_steps(MAKERS[name])
    assert np.abs(w_static - W0).max() > 1e-3
    np.testing.assert_allclose(dygraph_steps(MAKERS[name]), w_static, rtol=1e-6, atol=1e-7)
