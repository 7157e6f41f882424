"""dropout: both implementations in training and inference, masks, seeds and gradients."""

import numpy as np
import pytest
from oar.testing import OpCase, check_case, run_forward

rng = np.random.default_rng(0)
X = rng.uniform(0.5, 1.5, (4, 5))

CASES = [
    OpCase(
        "dropout",
        {"X": X},
        {"dropout_prob": 0.3, "is_test": True},
        ref=lambda X, dropout_prob, **_: {"Out": X * (1 - dropout_prob)},
        grad=["X"],
        name="infer_downgrade",
    ),
    OpCase(
        "dropout",
        {"X": X},
        {"dropout_prob": 0.3, "is_test": True, "dropout_implementation": "upscale_in_train"},
        ref=lambda X, **_: {"Out": X},
        grad=["X"],
        name="infer_upscale",
    ),
    # a fixed seed repeats the mask on every run, so the numeric gradient check is meaningful
    OpCase(
        "dropout",
        {"X": X},
        {"dropout_prob": 0.4, "fix_seed": True, "seed": 7},
        grad=["X"],
        grad_outputs=["Out"],
        name="train_fixed_seed",
    ),
    OpCase(
        "dropout",
        {"X": X},
        {
            "dropout_prob": 0.4,
            "fix_seed": True,
            "seed": 7,
            "dropout_implementation": "upscale_in_train",
        },
        grad=["X"],
        grad_outputs=["Out"],
        name="train_upscale_fixed_seed",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_dropout(case):
    check_case(case)


@pytest.mark.parametrize(
    "impl,scale", [("downgrade_in_infer", 1.0), ("upscale_in_train", 1 / 0.75)]
)
def test_training_output_is_masked_input(impl, scale):
    x = rng.uniform(0.5, 1.5, (200, 50)).astype("float32")
    got = run_forward(
        OpCase("dropout", {"X": x}, {"dropout_prob": 0.25, "dropout_implementation": impl})
    )
    out, mask = got["Out"][0], got["Mask"][0]
    assert mask.dtype == np.uint8 and out.dtype == np.float32
    np.testing.assert_allclose(out, x * mask * np.float32(scale), rtol=1e-6)
    assert abs(mask.mean() - 0.75) < 0.02


def test_seed_fixes_the_mask_and_no_seed_varies_it():
    x = np.ones((30, 30), "float32")
    fixed = OpCase("dropout", {"X": x}, {"dropout_prob": 0.5, "fix_seed": True, "seed": 3})
    a, b = run_forward(fixed)["Mask"][0], run_forward(fixed)["Mask"][0]
    np.testing.assert_array_equal(a, b)
    free = OpCase("dropout", {"X": x}, {"dropout_prob": 0.5})
    assert not np.array_equal(run_forward(free)["Mask"][0], run_forward(free)["Mask"][0])


def test_prob_out_of_range_refused():
    from oar.errors import AttrError

    with pytest.raises(AttrError, match="dropout_prob"):
        run_forward(OpCase("dropout", {"X": X}, {"dropout_prob": 1.5}))
