"""reduce_* forward vs numpy and numeric gradients (partial, keep_dim, full reductions)."""

import numpy as np
import pytest
from oar.testing import OpCase, check_case

rng = np.random.default_rng(1)


def r(*shape):
    return rng.uniform(-1, 1, shape)


def _ref(fn):
    def ref(X, dim=(0,), keep_dim=False, reduce_all=False, **_):
        axes = None if reduce_all else tuple(dim)
        out = np.asarray(fn(X, axis=axes, keepdims=keep_dim))
        return {"Out": out.reshape(1) if out.ndim == 0 else out}

    return ref


CASES = []
for op, fn in [
    ("reduce_sum", np.sum),
    ("reduce_mean", np.mean),
    ("reduce_max", np.max),
    ("reduce_min", np.min),
    ("reduce_prod", np.prod),
]:
    CASES += [
        OpCase(op, {"X": r(2, 3, 4)}, {"dim": [1]}, ref=_ref(fn), grad=["X"], name="dim1"),
        OpCase(
            op,
            {"X": r(2, 3, 4)},
            {"dim": [0, -1], "keep_dim": True},
            ref=_ref(fn),
            grad=["X"],
            name="keep",
        ),
        OpCase(op, {"X": r(3, 4)}, {"reduce_all": True}, ref=_ref(fn), grad=["X"], name="all"),
    ]
CASES += [
    OpCase(
        "reduce_prod",
        {"X": np.array([[0.0, 2.0, 3.0], [0.0, 0.0, 1.5]])},
        {"dim": [1]},
        ref=_ref(np.prod),
        grad=["X"],
        name="zeros",
    ),
    OpCase(
        "reduce_sum",
        {"X": np.arange(6, dtype="int64").reshape(2, 3)},
        {"dim": [1]},
        ref=_ref(np.sum),
        name="int64",
    ),
    OpCase(
        "reduce_all", {"X": np.array([[True, False], [True, True]])}, {"dim": [1]}, ref=_ref(np.all)
    ),
    OpCase(
        "reduce_any",
        {"X": np.array([[True, False], [False, False]])},
        {"dim": [1]},
        ref=_ref(np.any),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_reduce(case):
    check_case(case)
