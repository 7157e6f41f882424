"""lookup_table(_v2) and one_hot: forward vs numpy, numeric gradient of W, sparse W@GRAD."""

import numpy as np
import pytest
from oar.testing import OpCase, check_case

rng = np.random.default_rng(0)
W = rng.uniform(-1, 1, (6, 3))
IDS = np.array([[1], [4], [1], [0]], "int64")


def _lookup_ref(W, Ids, padding_idx=-1, **_):
    out = W[Ids.reshape(-1)].copy()
    if padding_idx != -1:
        out[Ids.reshape(-1) == padding_idx] = 0
    return {"Out": out.reshape(Ids.shape[:-1] + (W.shape[1],))}


def _lookup_v2_ref(W, Ids, **_):
    return {"Out": W[Ids]}


def _one_hot_ref(X, depth, allow_out_of_range=False, **_):
    flat = X.reshape(-1)
    out = np.zeros((flat.size, depth), "float32")
    for i, v in enumerate(flat):
        if 0 <= v < depth:
            out[i, v] = 1
    return {"Out": out.reshape(X.shape[:-1] + (depth,))}


CASES = [
    OpCase("lookup_table", {"W": W, "Ids": IDS}, ref=_lookup_ref, grad=["W"], name="dense"),
    OpCase(
        "lookup_table",
        {"W": W, "Ids": IDS},
        {"padding_idx": 1},
        ref=_lookup_ref,
        grad=["W"],
        name="padding",
    ),
    OpCase(
        "lookup_table",
        {"W": W, "Ids": IDS},
        {"is_sparse": True},
        ref=_lookup_ref,
        grad=["W"],
        name="sparse",
    ),
    OpCase(
        "lookup_table",
        {"W": W, "Ids": IDS.reshape(2, 2, 1)},
        ref=_lookup_ref,
        grad=["W"],
        name="rank3",
    ),
    OpCase("lookup_table_v2", {"W": W, "Ids": IDS.reshape(2, 2)}, ref=_lookup_v2_ref, grad=["W"]),
    OpCase("one_hot", {"X": np.array([[0], [3], [2]], "int64")}, {"depth": 4}, ref=_one_hot_ref),
    OpCase(
        "one_hot",
        {"X": np.array([[0], [5], [2]], "int64")},
        {"depth": 4, "allow_out_of_range": True},
        ref=_one_hot_ref,
        name="out_of_range",
    ),
    OpCase(
        "one_hot_v2",
        {"X": np.array([0, 3, 2], "int64")},
        {"depth": 4},
        ref=lambda X, depth, **_: {"Out": np.eye(depth, dtype="float32")[X]},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_embedding_ops(case):
    check_case(case)


def test_one_hot_out_of_range_fails_at_run_time():
    from oar.testing import run_forward

    with pytest.raises(Exception, match="outside"):
        run_forward(OpCase("one_hot", {"X": np.array([[7]], "int64")}, {"depth": 4}))


def test_lookup_ids_out_of_table_fail():
    from oar.testing import run_forward

    with pytest.raises(Exception, match="outside the table"):
        run_forward(OpCase("lookup_table", {"W": W, "Ids": np.array([[6]], "int64")}))
