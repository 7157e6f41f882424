"""clip, clip_by_norm and norm vs numpy, with numeric gradient checks (away from the kinks)."""

import numpy as np
import pytest
from oar.testing import OpCase, check_case

X = np.array([[-1.3, -0.4, 0.2], [0.7, 1.6, -0.05]])


def _norm_ref(X, axis=1, epsilon=1e-10, **_):
    n = np.sqrt((X * X).sum(axis, keepdims=True) + epsilon)
    return {"Out": X / n, "Norm": n}


CASES = [
    OpCase(
        "clip",
        {"X": X},
        {"min": -0.5, "max": 1.0},
        ref=lambda X, min, max: {"Out": np.clip(X, min, max)},
        grad=["X"],
    ),
    OpCase(
        "clip",
        {"X": X, "Min": np.array([-1.0]), "Max": np.array([0.5])},
        ref=lambda X, Min, Max: {"Out": np.clip(X, -1.0, 0.5)},
        grad=["X"],
        name="tensors",
    ),
    OpCase(
        "clip_by_norm",
        {"X": X},
        {"max_norm": 1.0},
        ref=lambda X, max_norm: {"Out": X * max_norm / np.linalg.norm(X)},
        grad=["X"],
    ),
    OpCase(
        "clip_by_norm",
        {"X": X},
        {"max_norm": 5.0},
        ref=lambda X, max_norm: {"Out": X},
        grad=["X"],
        name="inside",
    ),
    OpCase("norm", {"X": X}, {"axis": 1}, ref=_norm_ref, grad=["X"], grad_outputs=["Out"]),
    OpCase(
        "norm",
        {"X": X},
        {"axis": 0, "epsilon": 1e-6},
        ref=_norm_ref,
        grad=["X"],
        grad_outputs=["Out"],
        name="axis0",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_clip(case):
    check_case(case)
