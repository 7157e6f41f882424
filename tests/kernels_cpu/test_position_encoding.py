"""add_position_encoding against Fluid 1.8.5's numbers, with a gradient check."""

import numpy as np
import pytest
from oar.testing import OpCase, check_case


def _oracle_input():
    rs = np.random.RandomState(0)  # the oracle script drew these before its input
    for shape in ((5, 12), (12,), (2, 2), (2, 3), (2, 3)):
        rs.uniform(-1, 1, shape)
    return rs.uniform(-1, 1, (2, 3, 4))


_X = _oracle_input()
# Fluid 1.8.5's output for alpha 0.5, beta 2.0 (first batch row)
_FLUID_ROW0 = [
    [0.07594649493694305, 0.42929619550704956, 1.8185689449310303, 2.167410373687744],
    [1.3147398233413696, 0.21652720868587494, 0.8700106739997864, 1.6831912994384766],
    [1.9051077365875244, -0.4794924557209015, -0.5033536553382874, 1.5046954154968262],
]


def _ref(X, alpha, beta):
    half = X.shape[2] // 2
    pos = np.arange(X.shape[1])[:, None] / 10000.0 ** (np.arange(half) / (half - 1))
    return {"Out": alpha * X + beta * np.concatenate([np.sin(pos), np.cos(pos)], axis=1)}


CASES = [
    OpCase(
        "add_position_encoding",
        {"X": _X},
        {"alpha": 0.5, "beta": 2.0},
        ref=_ref,
        grad=["X"],
    )
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_position_encoding(case):
    check_case(case)


def test_reference_is_fluids():
    np.testing.assert_allclose(
        _ref(_X.astype("float32"), 0.5, 2.0)["Out"][0], _FLUID_ROW0, rtol=1e-5
    )
