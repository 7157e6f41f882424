"""Static-graph optimizers: what minimize returns and appends, and each optimizer class's steps
against the numpy reference of its update."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from oar import fluid
from oar.framework.operator import OpRole

# --- minimize, per-parameter learning rates, frozen parameters, accumulators


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


# --- each optimizer class against the numpy reference of its update

_spec = importlib.util.spec_from_file_location(
    "_optimizer_refs", Path(__file__).with_name("_refs.py")
)
_refs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_refs)
REFS = _refs.REFS

rng = np.random.default_rng(3)
W0 = rng.uniform(-1, 1, (3, 2)).astype("float32")
X = rng.uniform(-1, 1, (4, 3)).astype("float32")
Y = rng.uniform(-1, 1, (4, 2)).astype("float32")
OPT = fluid.optimizer


def grad_of(w):
    return X.astype("float64").T @ (2 * (X @ w - Y) / Y.size)


def build(opt, param_attr=None):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.data("x", [3])
        y = fluid.layers.data("y", [2])
        attr = param_attr or fluid.ParamAttr(
            name="w", initializer=fluid.initializer.NumpyArrayInitializer(W0)
        )
        pred = fluid.layers.fc(x, 2, param_attr=attr, bias_attr=False)
        loss = fluid.layers.mean(fluid.layers.square(pred - y))
        opt.minimize(loss)
    return main, startup


def run_steps(opt, steps=4, param_attr=None):
    main, startup = build(opt, param_attr)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    out = []
    for _ in range(steps):
        exe.run(main, feed={"x": X, "y": Y}, scope=scope)
        out.append(np.array(scope.find_var("w").value))
    return out, main


def zeros():
    return np.zeros_like(W0, dtype="float64")


# name: (optimizer, op type, initial state, attrs of the reference, lr, after-step hook on the state)
SPECS = {
    "Momentum": (
        lambda: OPT.Momentum(0.1, 0.9),
        "momentum",
        lambda: {"Velocity": zeros()},
        {"mu": 0.9},
        0.1,
    ),
    "Nesterov": (
        lambda: OPT.MomentumOptimizer(0.1, 0.9, use_nesterov=True),
        "momentum",
        lambda: {"Velocity": zeros()},
        {"mu": 0.9, "use_nesterov": True},
        0.1,
    ),
    "LarsMomentum": (
        lambda: OPT.LarsMomentum(0.1, 0.9, lars_coeff=0.01),
        "lars_momentum",
        lambda: {"Velocity": zeros()},
        {"mu": 0.9, "lars_coeff": 0.01},
        0.1,
    ),
    "Adagrad": (
        lambda: OPT.Adagrad(0.1, initial_accumulator_value=0.1),
        "adagrad",
        lambda: {"Moment": zeros() + 0.1},
        {},
        0.1,
    ),
    "DecayedAdagrad": (
        lambda: OPT.DecayedAdagrad(0.1, decay=0.9),
        "decayed_adagrad",
        lambda: {"Moment": zeros()},
        {"decay": 0.9},
        0.1,
    ),
    "RMSProp": (
        lambda: OPT.RMSProp(0.01),
        "rmsprop",
        lambda: {"Moment": zeros(), "MeanSquare": zeros(), "MeanGrad": zeros()},
        {"decay": 0.95, "epsilon": 1e-6},
        0.01,
    ),
    "RMSPropCentered": (
        lambda: OPT.RMSPropOptimizer(0.01, centered=True, momentum=0.5),
        "rmsprop",
        lambda: {"Moment": zeros(), "MeanSquare": zeros(), "MeanGrad": zeros()},
        {"decay": 0.95, "epsilon": 1e-6, "momentum": 0.5, "centered": True},
        0.01,
    ),
    "Adamax": (
        lambda: OPT.Adamax(0.1),
        "adamax",
        lambda: {"Moment": zeros(), "InfNorm": zeros(), "Beta1Pow": np.array([0.9])},
        {},
        0.1,
    ),
    "Adadelta": (
        lambda: OPT.Adadelta(0.1, rho=0.9),
        "adadelta",
        lambda: {"AvgSquaredGrad": zeros(), "AvgSquaredUpdate": zeros()},
        {"rho": 0.9},
        None,
    ),
    "Ftrl": (
        lambda: OPT.Ftrl(0.1, l1=0.01, l2=0.02),
        "ftrl",
        lambda: {"SquaredAccumulator": zeros(), "LinearAccumulator": zeros()},
        {"l1": 0.01, "l2": 0.02},
        0.1,
    ),
    "Lamb": (
        lambda: OPT.Lamb(0.1),
        "lamb",
        lambda: {
            "Moment1": zeros(),
            "Moment2": zeros(),
            "Beta1Pow": np.array([0.9]),
            "Beta2Pow": np.array([0.999]),
        },
        {},
        0.1,
    ),
    "Adam": (
        lambda: OPT.Adam(0.1),
        "adam",
        lambda: {
            "Moment1": zeros(),
            "Moment2": zeros(),
            "Beta1Pow": np.array([0.9]),
            "Beta2Pow": np.array([0.999]),
        },
        {},
        0.1,
    ),
}
_OUT_TO_IN = {"SquaredAccumOut": "SquaredAccumulator", "LinearAccumOut": "LinearAccumulator"}


def reference(op, state, attrs, lr, steps=4, l2=0.0):
    w = W0.astype("float64")
    traj = []
    for _ in range(steps):
        ins = {"Param": w, "Grad": grad_of(w) + l2 * w, **state}
        if lr is not None:
            ins["LearningRate"] = np.array([lr])
        out = REFS[op](**ins, **attrs)
        w = out.pop("ParamOut")
        for slot, v in out.items():
            state[_OUT_TO_IN.get(slot, slot[:-3])] = v
        if op == "adamax":
            state["Beta1Pow"] = state["Beta1Pow"] * 0.9
        traj.append(w)
    return traj


@pytest.mark.parametrize("name", list(SPECS))
def test_optimizer_steps_match_reference(name):
    make, op, state, attrs, lr = SPECS[name]
    got, main = run_steps(make())
    expected = reference(op, state(), attrs, lr)
    for i, (g, e) in enumerate(zip(got, expected)):
        np.testing.assert_allclose(g, e, rtol=2e-4, atol=2e-6, err_msg=f"{name}: step {i + 1}")
    assert any(o.type == op for o in main.global_block().ops)
    assert np.abs(got[-1] - W0).max() > 1e-3  # the parameter really moved


def test_fluid_aliases_are_the_classes():
    for short in [
        "Momentum",
        "LarsMomentum",
        "Adagrad",
        "DecayedAdagrad",
        "RMSProp",
        "Adamax",
        "Adadelta",
        "Ftrl",
        "Lamb",
    ]:
        assert getattr(OPT, short + "Optimizer") is getattr(OPT, short)


def test_update_ops_carry_optimize_role_and_fluid_attrs():
    main, _ = build(OPT.RMSProp(0.01, centered=True))
    op = next(o for o in main.global_block().ops if o.type == "rmsprop")
    assert op.attr("op_role") == 2
    assert op.attr("centered") is True and op.attr("decay") == 0.95
    assert op.input("Param") == op.output("ParamOut") == ["w"]


def test_lamb_excludes_parameters_from_weight_decay():
    main, _ = build(OPT.Lamb(0.1, exclude_from_weight_decay_fn=lambda p: p.name == "w"))
    op = next(o for o in main.global_block().ops if o.type == "lamb")
    assert op.attr("weight_decay") == 0.0


@pytest.mark.parametrize(
    "make,match",
    [
        (lambda: OPT.Momentum(0.1, momentum="a"), "momentum must be a float"),
        (lambda: OPT.RMSProp(0.1, rho=1.5), "rho must be in"),
        (lambda: OPT.Adamax(0.1, beta1=1.0), "beta1 must be in"),
        (lambda: OPT.DecayedAdagrad(0.1, decay=-0.1), "decay must be in"),
        (lambda: OPT.Ftrl(0.1, l1=-1.0), "l1 must be in"),
        (lambda: OPT.Adagrad("fast"), "learning_rate must be a float"),
    ],
)
def test_bad_arguments_are_refused(make, match):
    with pytest.raises((ValueError, TypeError), match=match):
        make()


@pytest.mark.parametrize("name", list(SPECS))
def test_every_optimizer_applies_its_regularization(name):
    make, op, state, attrs, lr = SPECS[name]
    opt = make()
    reg = fluid.regularizer.L2Decay(0.5)
    opt.regularization = reg
    got, _ = run_steps(opt, steps=2)
    expected = reference(op, state(), attrs, lr, steps=2, l2=0.5)
    for i, (g, e) in enumerate(zip(got, expected)):
        np.testing.assert_allclose(
            g, e, rtol=2e-4, atol=2e-6, err_msg=f"{name}+L2Decay: step {i + 1}"
        )


def test_constructors_take_regularization():
    reg = fluid.regularizer.L1Decay(0.1)
    for make in [
        lambda: OPT.Momentum(0.1, 0.9, regularization=reg),
        lambda: OPT.Adagrad(0.1, regularization=reg),
        lambda: OPT.RMSProp(0.1, regularization=reg),
        lambda: OPT.Adamax(0.1, regularization=reg),
        lambda: OPT.Adadelta(0.1, regularization=reg),
        lambda: OPT.DecayedAdagrad(0.1, regularization=reg),
        lambda: OPT.Ftrl(0.1, regularization=reg),
        lambda: OPT.Lamb(0.1, regularization=reg),
        lambda: OPT.LarsMomentum(0.1, 0.9, regularization=reg),
    ]:
        assert make().regularization is reg
