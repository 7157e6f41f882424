"""Comparison and logical ops against numpy (incl. Fluid's axis broadcast)."""

import numpy as np
import pytest
from oar.testing import OpCase, check_case

X = np.array([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]], "float32")
Y = np.array([[2.0, 2.0, 2.0], [1.0, 2.0, 3.0]], "float32")
A = np.array([[True, False], [True, True]])
B = np.array([[False, False], [True, False]])

CASES = []
for op, fn in [
    ("less_than", np.less),
    ("less_equal", np.less_equal),
    ("greater_than", np.greater),
    ("greater_equal", np.greater_equal),
    ("equal", np.equal),
    ("not_equal", np.not_equal),
]:
    CASES.append(OpCase(op, {"X": X, "Y": Y}, ref=lambda X, Y, fn=fn, **_: {"Out": fn(X, Y)}))
    CASES.append(
        OpCase(
            op,
            {"X": X, "Y": np.array([2.0, 1.0], "float32")},
            {"axis": 0},
            ref=lambda X, Y, fn=fn, **_: {"Out": fn(X, Y[:, None])},
            name="axis0",
        )
    )
CASES.append(
    OpCase(
        "less_than",
        {"X": np.array([1, 5], "int64"), "Y": np.array([3, 3], "int64")},
        ref=lambda X, Y, **_: {"Out": X < Y},
        name="int64",
    )
)
for op, fn in [
    ("logical_and", np.logical_and),
    ("logical_or", np.logical_or),
    ("logical_xor", np.logical_xor),
]:
    CASES.append(OpCase(op, {"X": A, "Y": B}, ref=lambda X, Y, fn=fn: {"Out": fn(X, Y)}))
CASES.append(OpCase("logical_not", {"X": A}, ref=lambda X: {"Out": ~X}))


@pytest.mark.parametrize("case", CASES, ids=str)
def test_compare(case):
    check_case(case)
