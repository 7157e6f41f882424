"""pixel_shuffle, shuffle_channel, crop_tensor, pad_constant_like, tril_triu, scatter_nd_add, randint."""

import numpy as np
import pytest
from oar.testing import OpCase, check_case, run_forward

rng = np.random.default_rng(8)


def r(*shape):
    return rng.uniform(-1, 1, shape)


def _pixel_shuffle_ref(X, upscale_factor):
    n, c, h, w = X.shape
    f = upscale_factor
    out = np.zeros((n, c // (f * f), h * f, w * f))
    for ch in range(c // (f * f)):
        for i in range(f):
            for j in range(f):
                out[:, ch, i::f, j::f] = X[:, ch * f * f + i * f + j]
    return {"Out": out}


def _shuffle_ref(X, group):
    n, c, h, w = X.shape
    k = c // group
    return {"Out": np.stack([X[:, (i % group) * k + i // group] for i in range(c)], axis=1)}


def _scatter_nd_ref(X, Index, Updates):
    out = X.copy()
    k = Index.shape[-1]
    for pos, up in zip(Index.reshape(-1, k), Updates.reshape((-1,) + X.shape[k:])):
        out[tuple(pos)] += up
    return {"Out": out}


CASES = [
    OpCase(
        "pixel_shuffle",
        {"X": r(1, 8, 2, 3)},
        {"upscale_factor": 2},
        ref=_pixel_shuffle_ref,
        grad=["X"],
    ),
    OpCase("shuffle_channel", {"X": r(1, 6, 2, 2)}, {"group": 3}, ref=_shuffle_ref, grad=["X"]),
    OpCase(
        "crop_tensor",
        {"X": r(3, 4, 2)},
        {"shape": [2, -1, 1], "offsets": [1, 1, 1]},
        ref=lambda X, **_: {"Out": X[1:3, 1:, 1:2]},
        grad=["X"],
    ),
    OpCase(
        "crop_tensor",
        {"X": r(3, 4), "Offsets": np.array([0, 2], "int32")},
        {"shape": [2, 2]},
        ref=lambda X, Offsets, **_: {"Out": X[0:2, 2:4]},
        grad=["X"],
        name="offsets_tensor",
    ),
    OpCase(
        "pad_constant_like",
        {"X": r(3, 4), "Y": r(2, 3)},
        {"pad_value": 1.5},
        ref=lambda X, Y, pad_value: {"Out": np.pad(Y, [(0, 1), (0, 1)], constant_values=pad_value)},
        grad=["Y"],
    ),
    OpCase(
        "tril_triu",
        {"X": r(2, 3, 4)},
        {"diagonal": 1, "lower": True},
        ref=lambda X, diagonal, lower: {"Out": np.tril(X, diagonal)},
        grad=["X"],
        name="tril",
    ),
    OpCase(
        "tril_triu",
        {"X": r(3, 4)},
        {"diagonal": -1, "lower": False},
        ref=lambda X, diagonal, lower: {"Out": np.triu(X, diagonal)},
        grad=["X"],
        name="triu",
    ),
    OpCase(
        "scatter_nd_add",
        {"X": r(3, 4), "Index": np.array([[1], [2], [1]], "int64"), "Updates": r(3, 4)},
        ref=_scatter_nd_ref,
        grad=["X", "Updates"],
        name="rows",
    ),
    OpCase(
        "scatter_nd_add",
        {"X": r(3, 4), "Index": np.array([[[0, 1]], [[2, 3]]], "int32"), "Updates": r(2, 1)},
        ref=_scatter_nd_ref,
        grad=["X", "Updates"],
        name="points",
    ),
    OpCase(
        "randint",
        {},
        {"shape": [2, 3], "low": 4, "high": 5, "seed": 2},
        ref=lambda **_: {"Out": np.full((2, 3), 4, "int64")},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_rearrange(case):
    check_case(case)


def test_randint_range_and_seed():
    case = OpCase(
        "randint", {}, {"shape": [2000], "low": -3, "high": 3, "seed": 5, "dtype": "int32"}
    )
    (a,) = run_forward(case)["Out"]
    (b,) = run_forward(case)["Out"]
    assert a.dtype == np.int32 and a.min() == -3 and a.max() == 2
    np.testing.assert_array_equal(a, b)
