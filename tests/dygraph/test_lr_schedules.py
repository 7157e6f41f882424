"""Dygraph LR schedules against values printed by Fluid 1.8 for the same arguments, and their state."""

import numpy as np
import pytest
from oar import fluid

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
