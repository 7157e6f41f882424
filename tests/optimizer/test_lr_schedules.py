"""LR schedules, static and dygraph: values against their formulas and against Fluid 1.8's
printed values, one step per exe.run / minimize, state and resume."""

from __future__ import annotations

import math

import numpy as np
import pytest
from oar import fluid

# --- static graph: values over steps against their formulas; one step per exe.run

L = fluid.layers
STEPS = 12


def ref_poly(t, lr, n, end, power, cycle):
    if cycle:
        n = n * max(1, math.ceil(t / n))
    else:
        t = min(t, n)
    return (lr - end) * (1 - t / n) ** power + end


def ref_piecewise(t, bounds, values):
    for b, v in zip(bounds, values):
        if t < b:
            return v
    return values[-1]


SCHEDULES = {
    "exponential": (lambda: L.exponential_decay(0.1, 3, 0.5), lambda t: 0.1 * 0.5 ** (t / 3)),
    "exponential_staircase": (
        lambda: L.exponential_decay(0.1, 3, 0.5, staircase=True),
        lambda t: 0.1 * 0.5 ** (t // 3),
    ),
    "natural_exp": (
        lambda: L.natural_exp_decay(0.1, 3, 0.5),
        lambda t: 0.1 * math.exp(-0.5 * t / 3),
    ),
    "natural_exp_staircase": (
        lambda: L.natural_exp_decay(0.1, 3, 0.5, True),
        lambda t: 0.1 * math.exp(-0.5 * (t // 3)),
    ),
    "inverse_time": (lambda: L.inverse_time_decay(0.1, 3, 0.5), lambda t: 0.1 / (1 + 0.5 * t / 3)),
    "inverse_time_staircase": (
        lambda: L.inverse_time_decay(0.1, 3, 0.5, True),
        lambda t: 0.1 / (1 + 0.5 * (t // 3)),
    ),
    "polynomial": (
        lambda: L.polynomial_decay(0.1, 4, 0.01, 2.0),
        lambda t: ref_poly(t, 0.1, 4, 0.01, 2.0, False),
    ),
    "polynomial_cycle": (
        lambda: L.polynomial_decay(0.1, 4, 0.01, 1.0, cycle=True),
        lambda t: ref_poly(t, 0.1, 4, 0.01, 1.0, True),
    ),
    "piecewise": (
        lambda: L.piecewise_decay([2, 5], [1.0, 0.5, 0.1]),
        lambda t: ref_piecewise(t, [2, 5], [1.0, 0.5, 0.1]),
    ),
    "cosine": (
        lambda: L.cosine_decay(0.1, 2, 5),
        lambda t: 0.1 * 0.5 * (math.cos((t // 2) * math.pi / 5) + 1),
    ),
    "noam": (
        lambda: L.noam_decay(16, 3, 2.0),
        lambda t: 2.0 * 16**-0.5 * min((t + 1) ** -0.5, (t + 1) * 3**-1.5),
    ),
    "warmup": (
        lambda: L.linear_lr_warmup(0.1, 3, 0.0, 0.2),
        lambda t: 0.2 * t / 3 if t < 3 else 0.1,
    ),
    "warmup_of_schedule": (
        lambda: L.linear_lr_warmup(L.exponential_decay(0.1, 3, 0.5), 3, 0.01, 0.05),
        lambda t: 0.01 + 0.04 * t / 3 if t < 3 else 0.1 * 0.5 ** (t / 3),
    ),
}


def run_schedule(make, steps=STEPS):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        lr = make()
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    return main, [
        float(exe.run(main, fetch_list=[lr], scope=scope)[0].reshape(-1)[0]) for _ in range(steps)
    ]


@pytest.mark.parametrize("name", list(SCHEDULES))
def test_schedule_values_follow_the_formula(name):
    make, ref = SCHEDULES[name]
    main, got = run_schedule(make)
    np.testing.assert_allclose(got, [ref(t) for t in range(STEPS)], rtol=1e-5, atol=1e-8)
    ops = main.global_block().ops
    assert ops[0].type == "increment" and ops[0].input("X") == ["@LR_DECAY_COUNTER@"]
    assert all(op.attr("op_role") == 16 for op in ops), "schedule ops carry op_role LRSched"


def test_step_advances_once_per_run_with_an_optimizer():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.data("x", [3])
        loss = fluid.layers.mean(fluid.layers.fc(x, 2))
        lr = L.piecewise_decay([3], [0.5, 0.25])
        lr2 = L.exponential_decay(1.0, 1, 0.5)  # shares the counter: still one increment
        fluid.optimizer.SGD(lr).minimize(loss)
    assert [op.type for op in main.global_block().ops].count("increment") == 1
    test_prog = main.clone(for_test=True)
    assert not any(
        op.type in ("increment", "sgd") or op.attr("op_role") for op in test_prog.global_block().ops
    )
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    feed = {"x": np.ones((2, 3), "float32")}
    seen = []
    for _ in range(5):
        exe.run(test_prog, feed=feed, scope=scope)  # evaluation does not advance the step
        seen.append(
            exe.run(main, feed=feed, fetch_list=[lr, lr2, "@LR_DECAY_COUNTER@"], scope=scope)
        )
    np.testing.assert_allclose([s[0][0] for s in seen], [0.5, 0.5, 0.5, 0.25, 0.25])
    np.testing.assert_allclose([s[1][0] for s in seen], [1.0, 0.5, 0.25, 0.125, 0.0625])
    assert [int(s[2][0]) for s in seen] == [0, 1, 2, 3, 4]
    counter = main.global_block().var("@LR_DECAY_COUNTER@")
    assert counter.persistable and counter.dtype == "int64"


def test_autoincreased_step_counter_begins_and_steps():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        c = L.autoincreased_step_counter("my_counter", begin=5, step=2)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    # as Fluid 1.8.5: the counter starts at begin - 1 and each run adds step first
    assert [int(exe.run(main, fetch_list=[c], scope=scope)[0][0]) for _ in range(3)] == [6, 8, 10]


@pytest.mark.parametrize(
    "make,match",
    [
        (
            lambda: L.piecewise_decay([1, 2], [0.1]),
            "len\\(values\\) must be len\\(boundaries\\) \\+ 1",
        ),
        (lambda: L.piecewise_decay([3, 2], [0.3, 0.2, 0.1]), "increasing order"),
        (lambda: L.exponential_decay(0.1, 0, 0.5), "decay_steps must be a number > 0"),
        (lambda: L.cosine_decay(0.1, 10, 0), "epochs must be a number > 0"),
        (
            lambda: L.exponential_decay("0.1", 10, 0.5),
            "learning_rate must be a float or a Variable",
        ),
    ],
)
def test_bad_schedule_arguments(make, match):
    with (
        fluid.program_guard(fluid.Program(), fluid.Program()),
        pytest.raises((ValueError, TypeError), match=match),
    ):
        make()


def _dy():
    from oar.dygraph import learning_rate_scheduler as dy

    return dy


DYGRAPH_TWINS = {  # layer call -> the fluid.dygraph schedule Fluid 1.8 returns under dygraph.guard()
    "exponential": lambda dy: dy.ExponentialDecay(0.1, 3, 0.5, False),
    "inverse_time_staircase": lambda dy: dy.InverseTimeDecay(0.1, 3, 0.5, True),
    "polynomial_cycle": lambda dy: dy.PolynomialDecay(0.1, 4, 0.01, 1.0, True),
    "piecewise": lambda dy: dy.PiecewiseDecay([2, 5], [1.0, 0.5, 0.1], 0),
    "cosine": lambda dy: dy.CosineDecay(0.1, 2, 5),
    "noam": lambda dy: dy.NoamDecay(16, 3, learning_rate=2.0),
    "warmup": lambda dy: dy.LinearLrWarmup(0.1, 3, 0.0, 0.2),
}


@pytest.mark.parametrize("name", list(DYGRAPH_TWINS))
def test_under_dygraph_guard_the_layers_return_dygraph_schedules(name):
    dy = _dy()
    with fluid.dygraph.guard():
        sched = SCHEDULES[name][0]()
        twin = DYGRAPH_TWINS[name](dy)
        assert type(sched) is type(twin)
        got, want = [sched() for _ in range(8)], [twin() for _ in range(8)]
    np.testing.assert_allclose(got, want, rtol=1e-7)
    assert len(set(np.round(got, 7))) > 1  # the rate really changes over the steps


def test_dygraph_schedule_drives_an_optimizer():
    with fluid.dygraph.guard():
        lr = L.piecewise_decay([2], [0.5, 0.25])
        lin = fluid.dygraph.Linear(2, 1)
        opt = fluid.optimizer.SGD(learning_rate=lr, parameter_list=lin.parameters())
        seen = []
        for _ in range(4):
            loss = fluid.layers.mean(lin(fluid.dygraph.to_variable(np.ones((2, 2), "float32"))))
            loss.backward()
            opt.minimize(loss)
            seen.append(lr.step_num)
            lin.clear_gradients()
    assert seen == [1, 2, 3, 4]


# --- dygraph schedules against values printed by Fluid 1.8, and their state

dg = fluid.dygraph

# per-step rates printed by paddle.fluid 1.8.5 for the same constructors (9 calls each)
EXPECTED = {
    "poly": (
        lambda: dg.PolynomialDecay(0.01, 10, 0.001),
        [0.01, 0.0091, 0.0082, 0.0073, 0.0064, 0.0055, 0.0046, 0.0037, 0.0028],
    ),
    "poly_cycle": (
        lambda: dg.PolynomialDecay(0.01, 4, 0.001, power=2.0, cycle=True),
        [0.01, 0.0060625, 0.00325, 0.0015625, 0.001, 0.0022656, 0.0015625, 0.0011406, 0.001],
    ),
    "piecewise": (
        lambda: dg.PiecewiseDecay([3, 6], [0.1, 0.05, 0.01], 0),
        [0.1, 0.1, 0.1, 0.05, 0.05, 0.05, 0.01, 0.01, 0.01],
    ),
    "natural_exp": (
        lambda: dg.NaturalExpDecay(0.1, 5, 0.5, staircase=True),
        [0.1, 0.1, 0.1, 0.1, 0.1, 0.0606531, 0.0606531, 0.0606531, 0.0606531],
    ),
    "exponential": (
        lambda: dg.ExponentialDecay(0.1, 5, 0.5),
        [0.1, 0.0870551, 0.0757858, 0.0659754, 0.0574349, 0.05, 0.0435275, 0.0378929, 0.0329877],
    ),
    "inverse_time": (
        lambda: dg.InverseTimeDecay(0.1, 5, 0.5),
        [0.1, 0.0909091, 0.0833333, 0.0769231, 0.0714286, 0.0666667, 0.0625, 0.0588235, 0.0555556],
    ),
    "cosine": (
        lambda: dg.CosineDecay(0.1, 3, 4),
        [0.1, 0.1, 0.1, 0.0853553, 0.0853553, 0.0853553, 0.05, 0.05, 0.05],
    ),
    "noam": (
        lambda: dg.NoamDecay(64, 4),
        [0.015625, 0.03125, 0.046875, 0.0625, 0.0559017, 0.051031, 0.0472456, 0.0441942, 0.0416667],
    ),
    "warmup": (
        lambda: dg.LinearLrWarmup(0.1, 4, 0.0, 0.1),
        [0.025, 0.05, 0.075, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1],
    ),
    "warmup_poly": (
        lambda: dg.LinearLrWarmup(dg.PolynomialDecay(0.1, 10, 0.01), 3, 0.0, 0.1),
        [0.0333333, 0.0666667, 0.082, 0.073, 0.064, 0.055, 0.046, 0.037, 0.028],
    ),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_schedule_matches_fluid(name):
    make, want = EXPECTED[name]
    sched = make()
    got = [sched() for _ in range(len(want))]
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-7)


def test_schedule_drives_optimizer_and_resumes():
    with fluid.dygraph.guard():
        lin = dg.Linear(2, 1)
        lr = dg.PiecewiseDecay([2], [1.0, 0.5], 0)
        opt = fluid.optimizer.SGDOptimizer(learning_rate=lr, parameter_list=lin.parameters())
        w0 = lin.weight.numpy()
        x = dg.to_variable(np.ones((1, 2), "float32"))
        for _ in range(3):
            fluid.layers.mean(lin(x)).backward()
            opt.minimize(fluid.layers.mean(lin(x)))
            lin.clear_gradients()
        # grads are ones: two steps at lr 1, one at 0.5
        np.testing.assert_allclose(lin.weight.numpy(), w0 - 2.5, rtol=1e-6)
        state = opt.state_dict()
        assert state["LR_Scheduler"]["step_num"] == 3
        lr2 = dg.PiecewiseDecay([2], [1.0, 0.5], 0)
        opt2 = fluid.optimizer.SGDOptimizer(learning_rate=lr2, parameter_list=lin.parameters())
        opt2.set_dict(state)
        assert lr2.step_num == 3 and opt2.current_step_lr() == 0.5


def test_reduce_on_plateau():
    sched = dg.ReduceLROnPlateau(1.0, patience=1, decay_rate=0.5)
    rates = [sched.step(v) for v in [5.0, 4.0, 4.0, 4.0, 4.0, 4.0]]
    assert rates == [1.0, 1.0, 1.0, 0.5, 0.5, 0.25]
    state = sched.state_dict()
    other = dg.ReduceLROnPlateau(1.0, patience=1, decay_rate=0.5)
    other.set_dict(state)
    assert other() == 0.25


def test_bad_arguments():
    with pytest.raises(ValueError, match="PiecewiseDecay"):
        dg.PiecewiseDecay([1, 2], [0.1], 0)
    with pytest.raises(ValueError, match="end_lr"):
        dg.LinearLrWarmup(0.1, 3, 0.5, 0.1)


def test_layers_decay_functions_return_dygraph_schedules():
    with dg.guard():
        cases = [
            (fluid.layers.exponential_decay(0.1, 5, 0.5), dg.ExponentialDecay),
            (fluid.layers.natural_exp_decay(0.1, 5, 0.5, True), dg.NaturalExpDecay),
            (fluid.layers.inverse_time_decay(0.1, 5, 0.5), dg.InverseTimeDecay),
            (fluid.layers.polynomial_decay(0.01, 10, 0.001), dg.PolynomialDecay),
            (fluid.layers.piecewise_decay([3, 6], [0.1, 0.05, 0.01]), dg.PiecewiseDecay),
            (fluid.layers.cosine_decay(0.1, 3, 4), dg.CosineDecay),
            (fluid.layers.noam_decay(64, 4), dg.NoamDecay),
            (fluid.layers.linear_lr_warmup(0.1, 4, 0.0, 0.1), dg.LinearLrWarmup),
        ]
        for sched, cls in cases:
            assert type(sched) is cls
        np.testing.assert_allclose(
            [cases[3][0]() for _ in range(3)], EXPECTED["poly"][1][:3], rtol=1e-6
        )
        lin = dg.Linear(2, 1)
        opt = fluid.optimizer.SGD(
            learning_rate=fluid.layers.piecewise_decay([1], [1.0, 0.5]),
            parameter_list=lin.parameters(),
        )
        x = dg.to_variable(np.ones((1, 2), "float32"))
        w0 = lin.weight.numpy()
        for _ in range(2):
            loss = fluid.layers.mean(lin(x))
            loss.backward()
            opt.minimize(loss)
            lin.clear_gradients()
        np.testing.assert_allclose(lin.weight.numpy(), w0 - 1.5, rtol=1e-6)
