"""erf, acos, asin, atan, log1p, mish: forward against numpy/scipy and numeric gradients."""

import numpy as np
import pytest
from oar import fluid
from oar.errors import ArgumentError
from oar.testing import OpCase, check_case
from scipy.special import erf

rng = np.random.default_rng(11)
U = rng.uniform(-0.9, 0.9, (3, 4))


def _mish(x, threshold=20.0):
    sp = np.where(x > threshold, x, np.where(x < -threshold, np.exp(x), np.log1p(np.exp(x))))
    return x * np.tanh(sp)


CASES = [
    OpCase("erf", {"X": U * 2}, ref=lambda X: {"Out": erf(X)}, grad=["X"], atol=3e-7),
    OpCase("acos", {"X": U}, ref=lambda X: {"Out": np.arccos(X)}, grad=["X"]),
    OpCase("asin", {"X": U}, ref=lambda X: {"Out": np.arcsin(X)}, grad=["X"]),
    OpCase("atan", {"X": U * 3}, ref=lambda X: {"Out": np.arctan(X)}, grad=["X"]),
    OpCase("log1p", {"X": U + 1}, ref=lambda X: {"Out": np.log1p(X)}, grad=["X"]),
    OpCase(
        "mish",
        {"X": U * 4},
        {"threshold": 20.0},
        ref=lambda X, threshold: {"Out": _mish(X)},
        grad=["X"],
    ),
    OpCase(
        "mish",
        {"X": np.array([[-3.0, -1.5, 1.5, 3.0]])},
        {"threshold": 1.0},
        ref=lambda X, threshold: {"Out": _mish(X, threshold)},
        grad=["X"],
        name="thresholded",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_activation_tensor(case):
    check_case(case)


def test_mish_matches_fluid_at_the_extremes():
    # Fluid 1.8.5: mish([-30, -1, 0, 1, 30]) (float32)
    fluid18 = [-2.807286954981114e-12, -0.3034014403820038, 0.0, 0.8650983572006226, 30.0]
    with fluid.dygraph.guard():
        x = fluid.dygraph.to_variable(np.array([-30.0, -1.0, 0.0, 1.0, 30.0], "float32"))
        got = fluid.layers.mish(x).numpy()
    np.testing.assert_allclose(got, fluid18, rtol=1e-6, atol=1e-15)


def test_layers_build_and_refuse_bad_threshold():
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        x = fluid.data("x", [None, 3], "float32")
        outs = [
            fluid.layers.erf(x),
            fluid.layers.acos(x),
            fluid.layers.asin(x),
            fluid.layers.atan(x),
            fluid.layers.log1p(x),
            fluid.layers.mish(x),
        ]
        assert [o.shape for o in outs] == [x.shape] * 6
        with pytest.raises(ArgumentError, match="mish.*threshold"):
            fluid.layers.mish(x, threshold=-1)
