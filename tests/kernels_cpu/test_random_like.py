"""uniform/gaussian_random_batch_size_like and sampling_id: shapes, bounds, seeds, determinism where exact."""

import numpy as np
import pytest
from oar.testing import OpCase, check_case, run_forward

INPUT = np.zeros((5, 2), "float32")

CASES = [
    # min == max - tiny: every draw is (almost) the same value, so the result is checkable exactly
    OpCase(
        "uniform_random_batch_size_like",
        {"Input": INPUT},
        {"shape": [-1, 3], "min": 1.0, "max": 1.0 + 1e-9},
        ref=lambda Input, **_: {"Out": np.ones((5, 3), "float32")},
    ),
    OpCase(
        "gaussian_random_batch_size_like",
        {"Input": INPUT},
        {"shape": [2, -1], "output_dim_idx": 1, "input_dim_idx": 1, "mean": 4.0, "std": 0.0},
        ref=lambda Input, **_: {"Out": np.full((2, 2), 4.0, "float32")},
    ),
    # one-hot rows: the sample is certain
    OpCase(
        "sampling_id",
        {"X": np.eye(4, dtype="float32")[[2, 0, 3]]},
        {"seed": 3},
        ref=lambda X, **_: {"Out": np.array([2, 0, 3])},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_random_like(case):
    check_case(case)


def test_batch_size_like_shapes_bounds_and_seed():
    u = OpCase(
        "uniform_random_batch_size_like",
        {"Input": INPUT},
        {"shape": [-1, 300], "min": 2.0, "max": 3.0, "seed": 9},
    )
    (a,) = run_forward(u)["Out"]
    (b,) = run_forward(u)["Out"]
    assert a.shape == (5, 300) and a.dtype == np.float32 and (a >= 2).all() and (a < 3).all()
    np.testing.assert_array_equal(a, b)
    g = OpCase(
        "gaussian_random_batch_size_like",
        {"Input": INPUT},
        {
            "shape": [400, -1],
            "input_dim_idx": 1,
            "output_dim_idx": 1,
            "mean": 3.0,
            "std": 0.5,
            "dtype": "float64",
        },
    )
    (c,) = run_forward(g)["Out"]
    assert c.shape == (400, 2) and c.dtype == np.float64
    assert abs(c.mean() - 3.0) < 0.1 and abs(c.std() - 0.5) < 0.1


def test_sampling_id_follows_probabilities():
    probs = np.tile(np.array([[0.1, 0.6, 0.3]], "float32"), (4000, 1))
    (ids,) = run_forward(OpCase("sampling_id", {"X": probs}, {"seed": 1}))["Out"]
    freq = np.bincount(ids, minlength=3) / len(ids)
    np.testing.assert_allclose(freq, [0.1, 0.6, 0.3], atol=0.03)
