"""Parametric activations (leaky_relu ... hard_shrink), pow, log_softmax, floor/ceil/round,
logsigmoid, tanh_shrink: forward vs numpy and numeric gradient checks (inputs away from kinks)."""

import math

import numpy as np
import pytest
from oar import fluid
from oar.testing import OpCase, check_case

rng = np.random.default_rng(7)


def away_from(points, shape, low=-3.0, high=3.0, margin=0.05):
    """Random float64 values at least ``margin`` away from each kink in ``points``."""
    x = rng.uniform(low, high, shape)
    for p in points:
        close = np.abs(x - p) < margin
        x[close] = p + np.where(x[close] >= p, margin, -margin) * 2
    return x


def sig(x):
    return 1 / (1 + np.exp(-x))


erf = np.vectorize(math.erf)
X = away_from([0.0], (3, 4))

CASES = [
    OpCase(
        "leaky_relu",
        {"X": X},
        {"alpha": 0.1},
        ref=lambda X, alpha: {"Out": np.where(X > 0, X, alpha * X)},
        grad=["X"],
    ),
    OpCase(
        "elu",
        {"X": X},
        {"alpha": 0.7},
        ref=lambda X, alpha: {"Out": np.where(X > 0, X, alpha * (np.exp(X) - 1))},
        grad=["X"],
    ),
    OpCase(
        "relu6",
        {"X": away_from([0, 2], (3, 4))},
        {"threshold": 2.0},
        ref=lambda X, threshold: {"Out": np.clip(X, 0, threshold)},
        grad=["X"],
    ),
    OpCase(
        "brelu",
        {"X": away_from([-1, 1], (3, 4))},
        {"t_min": -1.0, "t_max": 1.0},
        ref=lambda X, t_min, t_max: {"Out": np.clip(X, t_min, t_max)},
        grad=["X"],
    ),
    OpCase(
        "soft_relu",
        {"X": away_from([-2, 2], (3, 4))},
        {"threshold": 2.0},
        ref=lambda X, threshold: {"Out": np.log1p(np.exp(np.clip(X, -threshold, threshold)))},
        grad=["X"],
    ),
    OpCase(
        "swish", {"X": X}, {"beta": 1.5}, ref=lambda X, beta: {"Out": X * sig(beta * X)}, grad=["X"]
    ),
    OpCase(
        "gelu",
        {"X": X},
        {"approximate": False},
        ref=lambda X, approximate: {"Out": 0.5 * X * (1 + erf(X / math.sqrt(2)))},
        grad=["X"],
        rtol=1e-6,
        atol=1e-6,
        grad_atol=1e-5,
        name="exact",
    ),
    OpCase(
        "gelu",
        {"X": X},
        {"approximate": True},
        ref=lambda X, approximate: {
            "Out": 0.5 * X * (1 + np.tanh(math.sqrt(2 / math.pi) * (X + 0.044715 * X**3)))
        },
        grad=["X"],
        name="tanh",
    ),
    OpCase(
        "hard_sigmoid",
        {"X": away_from([-2.5, 2.5], (3, 4))},
        {"slope": 0.2, "offset": 0.5},
        ref=lambda X, slope, offset: {"Out": np.clip(slope * X + offset, 0, 1)},
        grad=["X"],
    ),
    OpCase(
        "hard_swish",
        {"X": away_from([-3, 3], (3, 4), -5, 5)},
        {},
        ref=lambda X: {"Out": X * np.clip(X + 3, 0, 6) / 6},
        grad=["X"],
    ),
    OpCase(
        "selu",
        {"X": X},
        {},
        ref=lambda X: {
            "Out": 1.0507009873554805 * np.where(X > 0, X, 1.6732632423543772 * (np.exp(X) - 1))
        },
        grad=["X"],
    ),
    OpCase(
        "stanh",
        {"X": X},
        {"scale_a": 0.67, "scale_b": 1.7159},
        ref=lambda X, scale_a, scale_b: {"Out": scale_b * np.tanh(scale_a * X)},
        grad=["X"],
    ),
    OpCase(
        "thresholded_relu",
        {"X": away_from([1.0], (3, 4))},
        {"threshold": 1.0},
        ref=lambda X, threshold: {"Out": np.where(X > threshold, X, 0)},
        grad=["X"],
    ),
    OpCase(
        "softshrink",
        {"X": away_from([-0.5, 0.5], (3, 4))},
        {"lambda": 0.5},
        ref=lambda X, **a: {"Out": np.where(X > 0.5, X - 0.5, np.where(X < -0.5, X + 0.5, 0))},
        grad=["X"],
    ),
    OpCase(
        "hard_shrink",
        {"X": away_from([-0.5, 0.5], (3, 4))},
        {"threshold": 0.5},
        ref=lambda X, threshold: {"Out": np.where(np.abs(X) > threshold, X, 0)},
        grad=["X"],
    ),
    OpCase(
        "pow",
        {"X": rng.uniform(0.5, 2.0, (3, 4))},
        {"factor": 2.5},
        ref=lambda X, factor: {"Out": X**factor},
        grad=["X"],
    ),
    OpCase(
        "pow",
        {"X": rng.uniform(0.5, 2.0, (3, 4)), "FactorTensor": np.array([3.0], "float32")},
        ref=lambda X, FactorTensor: {"Out": X**3},
        grad=["X"],
        name="factor_tensor",
    ),
    OpCase("logsigmoid", {"X": X}, ref=lambda X: {"Out": np.log(sig(X))}, grad=["X"]),
    OpCase("tanh_shrink", {"X": X}, ref=lambda X: {"Out": X - np.tanh(X)}, grad=["X"]),
    OpCase(
        "floor",
        {"X": away_from([-2, -1, 0, 1, 2], (3, 4))},
        ref=lambda X: {"Out": np.floor(X)},
        grad=["X"],
    ),
    OpCase(
        "ceil",
        {"X": away_from([-2, -1, 0, 1, 2], (3, 4))},
        ref=lambda X: {"Out": np.ceil(X)},
        grad=["X"],
    ),
    OpCase(
        "round",
        {"X": away_from([-1.5, -0.5, 0.5, 1.5], (3, 4))},
        ref=lambda X: {"Out": np.round(X)},
        grad=["X"],
    ),
    OpCase(
        "log_softmax",
        {"X": rng.uniform(-2, 2, (3, 5))},
        {"axis": -1},
        ref=lambda X, axis: {"Out": X - np.log(np.exp(X).sum(-1, keepdims=True))},
        grad=["X"],
    ),
    OpCase(
        "log_softmax",
        {"X": rng.uniform(-2, 2, (3, 4, 2))},
        {"axis": 1},
        ref=lambda X, axis: {"Out": X - np.log(np.exp(X).sum(1, keepdims=True))},
        grad=["X"],
        name="axis1",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_activation(case):
    check_case(case)


def test_float32_stays_float32():
    x = fluid.layers.data("x", [4])
    outs = [
        fluid.layers.leaky_relu(x),
        fluid.layers.gelu(x),
        fluid.layers.hard_swish(x),
        fluid.layers.selu(x),
        fluid.layers.log_softmax(x),
        fluid.layers.pow(x, 2.0),
    ]
    exe = fluid.Executor(fluid.CPUPlace())
    got = exe.run(feed={"x": np.ones((2, 4), "float32")}, fetch_list=outs)
    assert all(g.dtype == np.float32 for g in got)


def test_layer_defaults_match_fluid():
    x = fluid.layers.data("x", [4])
    block = fluid.default_main_program().global_block()
    fluid.layers.leaky_relu(x)
    fluid.layers.stanh(x)
    fluid.layers.softshrink(x, alpha=0.3)
    ops = {op.type: op for op in block.ops}
    assert ops["leaky_relu"].attr("alpha") == pytest.approx(0.02)
    assert ops["stanh"].attr("scale_a") == pytest.approx(0.67)
    assert ops["softshrink"].attr("lambda") == pytest.approx(0.3)


def test_bad_attrs_are_refused():
    x = fluid.layers.data("x", [4])
    with pytest.raises(ValueError, match="brelu"):
        fluid.layers.brelu(x, t_min=2.0, t_max=1.0)
    with pytest.raises(TypeError, match="leaky_relu"):
        fluid.layers.leaky_relu(np.ones(3))


def test_float_only_activation_refuses_int():
    x = fluid.layers.data("x", [4], dtype="int64")
    with pytest.raises(TypeError, match="must be a float tensor"):
        fluid.layers.elu(x)
