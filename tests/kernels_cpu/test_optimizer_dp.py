"""dpsgd: gradient clipped to L2 norm ``clip``, noise-free when sigma is 0."""

import numpy as np
import pytest
from oar.testing import OpCase, check_case, run_forward

rng = np.random.default_rng(81)
P, G = rng.uniform(-1, 1, (3, 4)), rng.uniform(-1, 1, (3, 4))


def _ref(Param, Grad, LearningRate, clip, batch_size, **_):
    norm = np.sqrt((Grad**2).sum())
    scale = norm / clip if norm > clip else 1.0
    return {"ParamOut": Param - LearningRate[0] * Grad / scale}


CASES = [
    OpCase(
        "dpsgd",
        {"Param": P, "Grad": G, "LearningRate": np.array([0.1])},
        {"clip": 0.5, "batch_size": 4.0, "sigma": 0.0, "seed": 0},
        ref=_ref,
    ),
    OpCase(
        "dpsgd",
        {"Param": P, "Grad": G * 0.01, "LearningRate": np.array([0.1])},
        {"clip": 10.0, "batch_size": 4.0, "sigma": 0.0, "seed": 0},
        ref=_ref,
        name="unclipped",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_optimizer_dp(case):
    check_case(case)


def test_noise_is_seeded_and_scaled_by_batch_size():
    case = OpCase(
        "dpsgd",
        {"Param": P, "Grad": G * 0.01, "LearningRate": np.array([1.0])},
        {"clip": 10.0, "batch_size": 100.0, "sigma": 1.0, "seed": 7},
    )
    a, b = run_forward(case)["ParamOut"][0], run_forward(case)["ParamOut"][0]
    np.testing.assert_array_equal(a, b)
    shift = (P - G * 0.01) - a  # one scalar noise / batch_size for every element
    assert np.allclose(shift, shift.flat[0]) and 0 < abs(shift.flat[0]) < 0.1
