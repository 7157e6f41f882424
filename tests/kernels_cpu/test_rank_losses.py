"""margin_rank_loss and rank_loss vs numpy, with numeric gradients."""

import numpy as np
import pytest
from oar.testing import OpCase, check_case

L1 = np.array([[0.3], [-0.4], [1.2], [0.1]])
L2 = np.array([[0.9], [-1.0], [0.2], [0.05]])
SIGN = np.array([[1.0], [-1.0], [1.0], [-1.0]])


CASES = [
    OpCase(
        "margin_rank_loss",
        {"X1": L1, "X2": L2, "Label": SIGN},
        {"margin": 0.1},
        ref=lambda X1, X2, Label, margin: {
            "Out": np.maximum(0, -Label * (X1 - X2) + margin),
            "Activated": (-Label * (X1 - X2) + margin > 0).astype(float),
        },
        grad=["X1", "X2"],
        grad_outputs=["Out"],
    ),
    OpCase(
        "rank_loss",
        {"Label": np.array([[1.0], [0.0], [0.5], [1.0]]), "Left": L1, "Right": L2},
        ref=lambda Label, Left, Right: {
            "Out": np.log1p(np.exp(Left - Right)) - Label * (Left - Right)
        },
        grad=["Left", "Right"],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_rank_losses(case):
    check_case(case)
