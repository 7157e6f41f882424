"""Every optimizer (and a clip) in dygraph mode takes the same steps as in the static graph."""

import numpy as np
import pytest
from oar import fluid

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
