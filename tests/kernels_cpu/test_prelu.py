"""prelu in its three modes: forward, gradients of X and Alpha, layer parameter shapes."""

import numpy as np
import pytest
from oar import fluid
from oar.testing import OpCase, check_case

rng = np.random.default_rng(3)
X = rng.uniform(-2, 2, (2, 3, 2, 2))
X[np.abs(X) < 0.05] = 0.3


def ref(X, Alpha, mode):
    a = Alpha.reshape({"all": [1], "channel": [1, 3, 1, 1], "element": [1, 3, 2, 2]}[mode])
    return {"Out": np.where(X > 0, X, a * X)}


CASES = [
    OpCase(
        "prelu",
        {"X": X, "Alpha": np.array([0.2])},
        {"mode": "all"},
        ref=ref,
        grad=["X", "Alpha"],
        name="all",
    ),
    OpCase(
        "prelu",
        {"X": X, "Alpha": rng.uniform(0, 0.5, (1, 3, 1, 1))},
        {"mode": "channel"},
        ref=ref,
        grad=["X", "Alpha"],
        name="channel",
    ),
    OpCase(
        "prelu",
        {"X": X, "Alpha": rng.uniform(0, 0.5, (1, 3, 2, 2))},
        {"mode": "element"},
        ref=ref,
        grad=["X", "Alpha"],
        name="element",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_prelu(case):
    check_case(case)


@pytest.mark.parametrize(
    "mode,shape", [("all", [1]), ("channel", [1, 3, 1, 1]), ("element", [1, 3, 4, 4])]
)
def test_prelu_layer_parameter(mode, shape):
    x = fluid.layers.data("x", [3, 4, 4])
    fluid.layers.prelu(x, mode)
    (alpha,) = fluid.default_main_program().all_parameters()
    assert list(alpha.shape) == shape


def test_prelu_bad_mode():
    x = fluid.layers.data("x", [3])
    with pytest.raises(ValueError, match="mode"):
        fluid.layers.prelu(x, "row")
