"""arg_max/arg_min/argsort/where_index/cumsum vs numpy (gradients for argsort and cumsum)."""

import numpy as np
import pytest
from oar.testing import OpCase, check_case

rng = np.random.default_rng(5)
X = rng.permutation(24).reshape(2, 3, 4).astype("float64") / 10


def _cumsum_ref(X, axis=-1, exclusive=False, reverse=False):
    x = np.flip(X, axis) if reverse else X
    out = np.cumsum(x, axis)
    if exclusive:
        out = out - x
    return {"Out": np.flip(out, axis) if reverse else out}


CASES = [
    OpCase("arg_max", {"X": X}, {"axis": 1}, ref=lambda X, axis: {"Out": X.argmax(axis)}),
    OpCase(
        "arg_min",
        {"X": X},
        {"axis": -1, "keepdims": True},
        ref=lambda X, axis, keepdims: {"Out": X.argmin(axis)[..., None]},
    ),
    OpCase(
        "arg_max",
        {"X": X[0]},
        {"axis": 0, "dtype": "int32"},
        ref=lambda X, **_: {"Out": X.argmax(0).astype("int32")},
        name="int32",
    ),
    OpCase(
        "argsort",
        {"X": X},
        {"axis": 1},
        ref=lambda X, axis: {"Out": np.sort(X, axis), "Indices": np.argsort(X, axis)},
        grad=["X"],
        grad_outputs=["Out"],
    ),
    OpCase(
        "argsort",
        {"X": X},
        {"axis": -1, "descending": True},
        ref=lambda X, axis, descending: {
            "Out": -np.sort(-X, axis),
            "Indices": np.argsort(-X, axis),
        },
        grad=["X"],
        grad_outputs=["Out"],
        name="descending",
    ),
    OpCase(
        "where_index",
        {"Condition": X[0] > 1.0},
        ref=lambda Condition: {"Out": np.argwhere(Condition)},
    ),
    OpCase("cumsum", {"X": X}, {"axis": 1}, ref=_cumsum_ref, grad=["X"]),
    OpCase(
        "cumsum",
        {"X": X},
        {"axis": -1, "exclusive": True, "reverse": True},
        ref=_cumsum_ref,
        grad=["X"],
        name="exclusive_reverse",
    ),
    OpCase(
        "cumsum",
        {"X": X[0]},
        {"axis": 0, "exclusive": True},
        ref=_cumsum_ref,
        grad=["X"],
        name="exclusive",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_search(case):
    check_case(case)
