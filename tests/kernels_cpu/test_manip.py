"""concat/split/stack/unstack/transpose2/squeeze2/unsqueeze2/flatten2/expand/expand_as vs numpy,
with numeric gradient checks."""

import numpy as np
import pytest
from oar.testing import OpCase, check_case

rng = np.random.default_rng(3)


def r(*shape):
    return rng.uniform(-1, 1, shape)


A, B = r(2, 3), r(2, 2)
X = r(2, 3, 4)

CASES = [
    OpCase(
        "concat",
        {"X": [A, B]},
        {"axis": 1},
        ref=lambda X, axis: {"Out": np.concatenate(X, axis)},
        grad=["X"],
    ),
    OpCase(
        "concat",
        {"X": [A, r(1, 3), r(3, 3)]},
        {"axis": -2},
        ref=lambda X, axis: {"Out": np.concatenate(X, axis)},
        grad=["X"],
        name="neg_axis",
    ),
    OpCase(
        "split",
        {"X": X},
        {"axis": 2, "num": 2},
        outputs={"Out": 2},
        ref=lambda X, axis, num: {"Out": np.split(X, num, axis)},
        grad=["X"],
        name="num",
    ),
    OpCase(
        "split",
        {"X": X},
        {"axis": 1, "sections": [1, -1]},
        outputs={"Out": 2},
        ref=lambda X, axis, sections: {"Out": [X[:, :1], X[:, 1:]]},
        grad=["X"],
        name="sections",
    ),
    OpCase(
        "stack",
        {"X": [A, r(2, 3), r(2, 3)]},
        {"axis": 1},
        ref=lambda X, axis: {"Y": np.stack(X, axis)},
        grad=["X"],
    ),
    OpCase(
        "stack",
        {"X": [A, r(2, 3)]},
        {"axis": -1},
        ref=lambda X, axis: {"Y": np.stack(X, axis)},
        grad=["X"],
        name="last",
    ),
    OpCase(
        "unstack",
        {"X": X},
        {"axis": 1, "num": 3},
        outputs={"Y": 3},
        ref=lambda X, axis, num: {"Y": [X[:, i] for i in range(3)]},
        grad=["X"],
    ),
    OpCase(
        "transpose2",
        {"X": X},
        {"axis": [2, 0, 1]},
        ref=lambda X, axis: {"Out": X.transpose(axis)},
        grad=["X"],
        grad_outputs=["Out"],
    ),
    OpCase(
        "squeeze2",
        {"X": r(2, 1, 3, 1)},
        {"axes": [1]},
        ref=lambda X, axes: {"Out": X.reshape(2, 3, 1)},
        grad=["X"],
        grad_outputs=["Out"],
    ),
    OpCase(
        "squeeze2",
        {"X": r(2, 1, 3, 1)},
        {"axes": []},
        ref=lambda X, axes: {"Out": X.reshape(2, 3)},
        grad=["X"],
        grad_outputs=["Out"],
        name="all",
    ),
    OpCase(
        "unsqueeze2",
        {"X": A},
        {"axes": [0, 3]},
        ref=lambda X, axes: {"Out": A.reshape(1, 2, 3, 1)},
        grad=["X"],
        grad_outputs=["Out"],
    ),
    OpCase(
        "flatten2",
        {"X": X},
        {"axis": 2},
        ref=lambda X, axis: {"Out": X.reshape(6, 4)},
        grad=["X"],
        grad_outputs=["Out"],
    ),
    OpCase(
        "flatten2",
        {"X": X},
        {"axis": 0},
        ref=lambda X, axis: {"Out": X.reshape(1, 24)},
        grad=["X"],
        grad_outputs=["Out"],
        name="axis0",
    ),
    OpCase(
        "expand",
        {"X": A},
        {"expand_times": [2, 3]},
        ref=lambda X, expand_times: {"Out": np.tile(X, expand_times)},
        grad=["X"],
    ),
    OpCase(
        "expand",
        {"X": A, "ExpandTimes": np.array([1, 2], "int32")},
        ref=lambda X, ExpandTimes: {"Out": np.tile(X, [1, 2])},
        grad=["X"],
        name="tensor",
    ),
    OpCase(
        "expand_as",
        {"X": r(1, 3), "target_tensor": r(4, 6)},
        ref=lambda X, target_tensor: {"Out": np.tile(X, (4, 2))},
        grad=["X"],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_manip(case):
    check_case(case)
