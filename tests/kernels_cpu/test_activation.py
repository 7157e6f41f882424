"""Unary activations: forward against numpy and numeric gradients, away from kinks."""

import numpy as np
import pytest
from oar.testing import OpCase, check_case

rng = np.random.default_rng(1)


def away_from_zero(*shape, low=0.2, high=1.0):
    """Values in [-high, -low] U [low, high]: no kink at 0 within a finite-difference step."""
    mag = rng.uniform(low, high, shape)
    return (mag * rng.choice([-1.0, 1.0], shape)).astype("float64")


def positive(*shape, low=0.3, high=2.0):
    return rng.uniform(low, high, shape).astype("float64")


def ref(fn):
    return lambda X: {"Out": fn(X)}


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


CASES = [
    OpCase("relu", {"X": away_from_zero(3, 4)}, ref=ref(lambda x: np.maximum(x, 0)), grad=["X"]),
    OpCase("sigmoid", {"X": away_from_zero(3, 4)}, ref=ref(_sigmoid), grad=["X"]),
    OpCase("tanh", {"X": away_from_zero(3, 4)}, ref=ref(np.tanh), grad=["X"]),
    OpCase("exp", {"X": away_from_zero(3, 4)}, ref=ref(np.exp), grad=["X"]),
    OpCase("sqrt", {"X": positive(3, 4)}, ref=ref(np.sqrt), grad=["X"]),
    OpCase("rsqrt", {"X": positive(3, 4)}, ref=ref(lambda x: 1 / np.sqrt(x)), grad=["X"]),
    OpCase("reciprocal", {"X": positive(3, 4)}, ref=ref(lambda x: 1 / x), grad=["X"]),
    OpCase("square", {"X": away_from_zero(3, 4)}, ref=ref(np.square), grad=["X"]),
    OpCase("abs", {"X": away_from_zero(3, 4)}, ref=ref(np.abs), grad=["X"]),
    OpCase("log", {"X": positive(3, 4)}, ref=ref(np.log), grad=["X"]),
    OpCase("sin", {"X": away_from_zero(3, 4)}, ref=ref(np.sin), grad=["X"]),
    OpCase("cos", {"X": away_from_zero(3, 4)}, ref=ref(np.cos), grad=["X"]),
    OpCase(
        "softsign", {"X": away_from_zero(3, 4)}, ref=ref(lambda x: x / (1 + np.abs(x))), grad=["X"]
    ),
    OpCase(
        "softplus", {"X": away_from_zero(3, 4)}, ref=ref(lambda x: np.log1p(np.exp(x))), grad=["X"]
    ),
    OpCase("sign", {"X": np.array([-2.5, 0.0, 3.0, -0.1], "float64")}, ref=ref(np.sign)),
    # float32 stays float32
    OpCase(
        "relu",
        {"X": away_from_zero(2, 5).astype("float32")},
        ref=ref(lambda x: np.maximum(x, 0)),
        name="float32",
    ),
    OpCase("abs", {"X": np.array([[-3, 2], [0, -1]], "int64")}, ref=ref(np.abs), name="int64"),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_activation(case):
    check_case(case)


def test_float32_stays_float32():
    from oar.testing import run_forward

    for op in ("relu", "sigmoid", "tanh", "softplus"):
        got = run_forward(OpCase(op, {"X": away_from_zero(2, 3).astype("float32")}))
        assert got["Out"][0].dtype == np.float32, op


def test_relu_on_int_input_is_refused_at_build_time():
    from oar import fluid
    from oar.errors import DtypeError

    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        x = fluid.layers.data("x", shape=[3], dtype="int64")
        with pytest.raises(DtypeError, match="relu") as info:
            fluid.layers.relu(x)
    assert "test_activation.py" in str(info.value)
