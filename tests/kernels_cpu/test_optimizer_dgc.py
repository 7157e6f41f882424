"""dgc_momentum: momentum before the ramp-up, then top-k updates with momentum correction."""

import math

import numpy as np
import pytest
from oar import fluid
from oar.errors import OarError
from oar.testing import OpCase, check_case

rng = np.random.default_rng(151)
P, G, U, V = (rng.uniform(-1, 1, (4, 5)) for _ in range(4))


def _attrs(step_begin, sparsity=(0.75,), nesterov=False):
    return {
        "mu": 0.9,
        "use_nesterov": nesterov,
        "sparsity": list(sparsity),
        "rampup_begin_step": step_begin,
        "rampup_step": 1.0,
    }


def _ref(
    Param, Grad, U, V, LearningRate, CurrentStep, mu, use_nesterov, sparsity, rampup_begin_step, **_
):
    p, u, v, lr = Param.copy(), U.copy(), V.copy(), LearningRate[0]
    if CurrentStep[0] < rampup_begin_step:
        u = mu * u + Grad
        return {"ParamOut": p - lr * u, "UOut": u, "VOut": v}
    u = mu * u + Grad
    v = v + u
    k = max(1, math.ceil(v.size * (1 - sparsity[-1])))
    thr = np.sort(np.abs(v).ravel())[-k]
    mask = np.abs(v) >= thr
    return {"ParamOut": p - lr * v * mask, "UOut": u * ~mask, "VOut": v * ~mask}


def _case(step, begin, name):
    ins = {
        "Param": P,
        "Grad": G,
        "U": U,
        "V": V,
        "LearningRate": np.array([0.1]),
        "CurrentStep": np.array([step]),
    }
    return OpCase("dgc_momentum", ins, _attrs(begin), ref=_ref, name=name)


def _ref_encode(Grad, U, V, CurrentStep, mu, sparsity, rampup_begin_step, **_):
    if CurrentStep[0] < rampup_begin_step:
        return {
            "UOut": U,
            "VOut": V,
            "EncodeIndex": np.arange(Grad.size),
            "EncodeValue": Grad.ravel(),
        }
    u = mu * U + Grad
    v = V + u
    k = max(1, math.ceil(v.size * (1 - sparsity[-1])))
    top = np.sort(np.argsort(-np.abs(v).ravel())[:k])
    value = v.ravel()[top].copy()
    v.ravel()[top] = 0
    u.ravel()[top] = 0
    return {"UOut": u, "VOut": v, "EncodeIndex": top, "EncodeValue": value}


def _ref_apply(Param, U, Index, Value, LearningRate, CurrentStep, mu, rampup_begin_step, **_):
    dense = np.zeros(Param.size)
    np.add.at(dense, Index, Value)
    dense = dense.reshape(Param.shape)
    if CurrentStep[0] >= rampup_begin_step:
        return {"ParamOut": Param - LearningRate[0] * dense, "UOut": U}
    u = mu * U + dense
    return {"ParamOut": Param - LearningRate[0] * u, "UOut": u}


def _encode_case(step, name):
    ins = {"Grad": G, "U": U, "V": V, "CurrentStep": np.array([step])}
    return OpCase("dgc", ins, _attrs(5.0), ref=_ref_encode, name=name)


def _apply_case(step, name):
    ins = {
        "Param": P,
        "U": U,
        "Index": np.array([0, 7, 3, 7, 19]),  # two ranks sent index 7
        "Value": rng.uniform(-1, 1, 5),
        "LearningRate": np.array([0.1]),
        "CurrentStep": np.array([step]),
    }
    attrs = {"mu": 0.9, "use_nesterov": False, "rampup_begin_step": 5.0}
    return OpCase("dgc_apply", ins, attrs, ref=_ref_apply, name=name)


CASES = [
    _case(0.0, 5.0, "momentum_phase"),
    _case(6.0, 5.0, "compressed"),
    _encode_case(0.0, "dense_phase"),
    _encode_case(6.0, "top_k"),
    _apply_case(0.0, "momentum_phase"),
    _apply_case(6.0, "sparse_sum"),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_optimizer_dgc(case):
    check_case(case)


def _train(make_opt, steps=6):
    x = np.random.default_rng(3).uniform(-1, 1, (8, 4)).astype("float32")
    y = x @ np.arange(1, 5, dtype="float32").reshape(4, 1)
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        xv, yv = fluid.data("x", [None, 4], "float32"), fluid.data("y", [None, 1], "float32")
        pred = fluid.layers.fc(
            xv,
            1,
            param_attr=fluid.ParamAttr("w", initializer=fluid.initializer.Constant(0.1)),
            bias_attr=False,
        )
        loss = fluid.layers.reduce_mean(fluid.layers.square(pred - yv))
        make_opt().minimize(loss)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    return [
        float(exe.run(main, feed={"x": x, "y": y}, fetch_list=[loss], scope=scope)[0][0])
        for _ in range(steps)
    ]


def test_optimizer_is_momentum_before_the_rampup_and_still_learns_after():
    want = _train(lambda: fluid.optimizer.Momentum(0.05, 0.9))
    got = _train(lambda: fluid.optimizer.DGCMomentumOptimizer(0.05, 0.9, rampup_begin_step=100))
    np.testing.assert_allclose(got, want, rtol=1e-5)
    sparse = _train(
        lambda: fluid.optimizer.DGCMomentumOptimizer(
            0.05, 0.9, rampup_begin_step=2, sparsity=[0.5]
        ),
        steps=20,
    )
    assert sparse[-1] < sparse[0] * 0.5


def test_bad_arguments_are_refused():
    with pytest.raises(OarError, match="sparsity"):
        fluid.optimizer.DGCMomentumOptimizer(0.1, 0.9, 0, sparsity=[1.5])
    with pytest.raises(OarError, match="rampup_step"):
        fluid.optimizer.DGCMomentumOptimizer(0.1, 0.9, 0, rampup_step=0)
