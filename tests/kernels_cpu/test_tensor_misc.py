"""cos_sim, label_smooth, reverse, roll, multiplex, eye, diag, unique, size, isfinite/isinf/isnan."""

import numpy as np
import pytest
from oar.testing import OpCase, check_case

rng = np.random.default_rng(6)


def r(*shape):
    return rng.uniform(-1, 1, shape)


def _cos_ref(X, Y):
    x, y = X.reshape(X.shape[0], -1), Y.reshape(Y.shape[0], -1)
    xn = np.linalg.norm(x, axis=1, keepdims=True)
    yn = np.linalg.norm(y, axis=1, keepdims=True)
    return {"Out": (x * y).sum(1, keepdims=True) / (xn * yn), "XNorm": xn, "YNorm": yn}


def _unique_ref(X, dtype="int32"):
    vals, first = np.unique(X, return_index=True)
    out = vals[np.argsort(first)]
    return {"Out": out, "Index": np.array([list(out).index(v) for v in X], dtype)}


X = r(3, 4)
CASES = [
    OpCase("cos_sim", {"X": X, "Y": r(3, 4)}, ref=_cos_ref, grad=["X", "Y"], grad_outputs=["Out"]),
    OpCase(
        "cos_sim",
        {"X": X, "Y": r(1, 4)},
        ref=_cos_ref,
        grad=["X", "Y"],
        grad_outputs=["Out"],
        name="bcast",
    ),
    OpCase(
        "label_smooth",
        {"X": np.eye(4)[[0, 2, 3]]},
        {"epsilon": 0.1},
        ref=lambda X, epsilon: {"Out": 0.9 * X + 0.1 / 4},
        grad=["X"],
    ),
    OpCase(
        "label_smooth",
        {"X": np.eye(4)[[0, 2, 3]], "PriorDist": np.array([[0.1, 0.2, 0.3, 0.4]])},
        {"epsilon": 0.2},
        ref=lambda X, PriorDist, epsilon: {"Out": 0.8 * X + 0.2 * PriorDist},
        grad=["X"],
        name="prior",
    ),
    OpCase(
        "reverse",
        {"X": X},
        {"axis": [0, -1]},
        ref=lambda X, axis: {"Out": X[::-1, ::-1]},
        grad=["X"],
    ),
    OpCase(
        "roll",
        {"X": X},
        {"shifts": [1, -2], "dims": [0, 1]},
        ref=lambda X, shifts, dims: {"Out": np.roll(X, shifts, dims)},
        grad=["X"],
    ),
    OpCase(
        "roll",
        {"X": X},
        {"shifts": [5]},
        ref=lambda X, shifts: {"Out": np.roll(X.ravel(), 5).reshape(3, 4)},
        grad=["X"],
        name="flat",
    ),
    OpCase(
        "multiplex",
        {"X": [X, r(3, 4), r(3, 4)], "Ids": np.array([[2], [0], [2]], "int32")},
        ref=lambda X, Ids: {"Out": np.stack([X[2][0], X[0][1], X[2][2]])},
        grad=["X"],
    ),
    OpCase(
        "eye",
        {},
        {"num_rows": 3, "num_columns": 4, "dtype": "float32"},
        ref=lambda **_: {"Out": np.eye(3, 4, dtype="float32")},
    ),
    OpCase(
        "diag",
        {"Diagonal": np.array([1.0, 2.0, 3.0])},
        ref=lambda Diagonal: {"Out": np.diag(Diagonal)},
    ),
    OpCase("unique", {"X": np.array([2, 3, 3, 1, 5, 3], "int64")}, ref=_unique_ref),
    OpCase(
        "unique_with_counts",
        {"X": np.array([2, 3, 3, 1, 5, 3], "int64")},
        ref=lambda X, **_: {**_unique_ref(X), "Count": np.array([1, 3, 1, 1], "int32")},
    ),
    OpCase(
        "shard_index",
        {"X": np.array([[1], [6], [12], [19]], "int64")},
        {"index_num": 20, "nshards": 2, "shard_id": 1, "ignore_value": -1},
        ref=lambda X, **_: {"Out": np.array([[-1], [-1], [2], [9]])},
    ),
    OpCase("size", {"Input": X}, ref=lambda Input: {"Out": np.array([12], "int64")}),
    OpCase("isfinite", {"X": np.array([1.0, np.inf])}, ref=lambda X: {"Out": np.array([False])}),
    OpCase("isinf", {"X": np.array([1.0, -np.inf])}, ref=lambda X: {"Out": np.array([True])}),
    OpCase("isnan", {"X": np.array([1.0, 2.0])}, ref=lambda X: {"Out": np.array([False])}),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_tensor_misc(case):
    check_case(case)
