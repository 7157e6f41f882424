"""elementwise_* forward against numpy and numeric gradient checks (incl. Fluid's axis broadcast)."""

import numpy as np
import pytest
from oar.testing import OpCase, check_case

rng = np.random.default_rng(0)


def r(*shape, low=-1.0, high=1.0):
    return rng.uniform(low, high, shape).astype("float64")


def _ref(fn):
    def ref(X, Y, axis=-1):
        if X.ndim != Y.ndim and axis not in (-1, X.ndim - Y.ndim):
            Y = Y.reshape((1,) * axis + Y.shape + (1,) * (X.ndim - axis - Y.ndim))
        return {"Out": fn(X, Y)}

    return ref


CASES = []
for op, fn, lo in [
    ("elementwise_add", np.add, -1),
    ("elementwise_sub", np.subtract, -1),
    ("elementwise_mul", np.multiply, -1),
    ("elementwise_div", np.divide, 0.5),
    ("elementwise_max", np.maximum, -1),
    ("elementwise_min", np.minimum, -1),
    ("elementwise_pow", np.power, 0.5),
]:
    CASES += [
        OpCase(
            op,
            {"X": r(2, 3, low=lo), "Y": r(2, 3, low=lo)},
            ref=_ref(fn),
            grad=["X", "Y"],
            name="same",
        ),
        OpCase(
            op,
            {"X": r(2, 3, 4, low=lo), "Y": r(3, low=lo)},
            {"axis": 1},
            ref=_ref(fn),
            grad=["X", "Y"],
            name="axis1",
        ),
        OpCase(
            op,
            {"X": r(2, 3, 4, low=lo), "Y": r(3, 4, low=lo)},
            ref=_ref(fn),
            grad=["X", "Y"],
            name="trailing",
        ),
    ]
CASES += [
    OpCase(
        "elementwise_mod",
        {"X": np.array([5, -7, 9], "int64"), "Y": np.array([3, 3, 4], "int64")},
        ref=_ref(np.mod),
    ),
    OpCase(
        "elementwise_floordiv",
        {"X": np.array([5, -7, 9], "int64"), "Y": np.array([3, 3, 4], "int64")},
        ref=_ref(np.floor_divide),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_elementwise(case):
    check_case(case)
