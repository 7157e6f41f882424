"""clip and clip_by_norm against numpy (+ the clip gradient)."""

import numpy as np
import pytest
from oar import fluid
from oar.testing import OpCase, check_case

rng = np.random.default_rng(2)


def away_from(lo, hi, shape):
    """Values in [-1, 1] that stay 0.05 away from the clip kinks."""
    x = rng.uniform(-1, 1, shape)
    for k in (lo, hi):
        x = np.where(np.abs(x - k) < 0.05, x + 0.1, x)
    return x


def ref_clip(X, Min=None, Max=None, min=None, max=None):
    lo = float(Min[0]) if Min is not None else min
    hi = float(Max[0]) if Max is not None else max
    return {"Out": np.clip(X, lo, hi)}


def ref_clip_by_norm(X, max_norm):
    n = np.sqrt(np.sum(X * X))
    return {"Out": X * (max_norm / n) if n > max_norm else X}


CASES = [
    OpCase("clip", {"X": away_from(-0.4, 0.3, (3, 4))}, {"min": -0.4, "max": 0.3}, ref=ref_clip, grad=["X"]),
    OpCase("clip", {"X": away_from(-0.2, 0.5, (2, 5)), "Min": np.array([-0.2]), "Max": np.array([0.5])},
           {"min": -9.0, "max": 9.0}, ref=ref_clip, grad=["X"], name="tensor_bounds"),
    OpCase("clip_by_norm", {"X": rng.uniform(-1, 1, (3, 4))}, {"max_norm": 0.5}, ref=ref_clip_by_norm,
           name="clipped"),
    OpCase("clip_by_norm", {"X": rng.uniform(-0.1, 0.1, (3, 4))}, {"max_norm": 5.0}, ref=ref_clip_by_norm,
           name="unchanged"),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_clip_ops(case):
    check_case(case)


def test_clip_refuses_min_above_max():
    main = fluid.Program()
    with fluid.program_guard(main):
        x = fluid.layers.data("x", [3])
        out = main.global_block().create_var(name="o")
        with pytest.raises(Exception, match="min .* must not exceed max"):
            main.global_block().append_op("clip", {"X": [x]}, {"Out": [out]}, {"min": 1.0, "max": -1.0})
