"""deformable_psroi_pooling: numeric gradients (incl. the position-sensitive form, which
Fluid 1.8.5 cannot run under Python 3) and bad input (Fluid 1.8.5's numbers are in
test_deformable_roi_pooling_fluid_golden.py)."""

import numpy as np
import pytest
from oar import fluid
from oar.errors import OarError
from oar.testing import OpCase, check_case, run_forward

RNG = np.random.RandomState(13)
ROIS = np.array([[1.0, 0.0, 5.0, 4.0], [0.0, 2.0, 3.0, 6.0]])
BASE = {"no_trans": False, "spatial_scale": 1.0, "group_size": [1, 1], "pooled_height": 2,
        "pooled_width": 2, "part_size": [2, 2], "sample_per_part": 2, "trans_std": 0.1}  # fmt: skip
CASES = [
    OpCase(
        "deformable_psroi_pooling",
        {"Input": RNG.rand(1, 2, 7, 7), "ROIs": ROIS, "Trans": RNG.randn(2, 2, 2, 2) * 0.3 + 0.05},
        {**BASE, "output_dim": 2},
        grad=["Input", "Trans"],
        grad_outputs=["Output"],
        grad_rtol=1e-3,
        grad_atol=1e-5,
    ),
    OpCase(
        "deformable_psroi_pooling",
        {"Input": RNG.rand(1, 8, 7, 7), "ROIs": ROIS, "Trans": RNG.randn(2, 2, 2, 2) * 0.3 + 0.05},
        {**BASE, "output_dim": 2, "group_size": [2, 2], "position_sensitive": True},
        grad=["Input", "Trans"],
        grad_outputs=["Output"],
        grad_rtol=1e-3,
        grad_atol=1e-5,
        name="position_sensitive",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_deformable_roi_pooling(case):
    check_case(case)


def test_no_trans_with_one_sample_is_the_bin_corner_value():
    x = np.arange(36, dtype="float64").reshape(1, 1, 6, 6)
    case = OpCase(
        "deformable_psroi_pooling",
        {"Input": x, "ROIs": np.array([[0.0, 0.0, 3.0, 3.0]]), "Trans": np.zeros((1, 2, 1, 1))},
        {**BASE, "no_trans": True, "output_dim": 1, "sample_per_part": 1, "part_size": [1, 1]},
    )
    # a 4 x 4 ROI from -0.5: bin starts at -0.5 and 1.5 -> clamped sample points (0, 0), (0, 1.5)...
    out = run_forward(case)["Output"][0]
    np.testing.assert_allclose(out[0, 0], [[0.0, 1.5], [9.0, 10.5]])


def _build(fn):
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        return fn(fluid.layers)


def _args(c=8):
    return (fluid.data("x", [1, c, 8, 8], "float32"), fluid.data("r", [-1, 4], "float32", lod_level=1),
            fluid.data("t", [2, 2, 2, 2], "float32"))  # fmt: skip


BAD = [
    (lambda L: L.deformable_roi_pooling(*_args(), group_size=[2]), "group_size"),
    (lambda L: L.deformable_roi_pooling(*_args(), pooled_height=0), "pooled_height"),
    (lambda L: L.deformable_roi_pooling(*_args(), pooled_height=3, pooled_width=3), "part_size"),
    (
        lambda L: L.deformable_roi_pooling(*_args(6), group_size=[2, 2], position_sensitive=True),
        "channels",
    ),
]


@pytest.mark.parametrize("fn,match", BAD)
def test_bad_input_names_layer_and_line(fn, match):
    with pytest.raises(OarError, match=match) as info:
        _build(fn)
    text = str(info.value)
    assert (
        "deformable_roi_pooling" in text or "deformable_psroi_pooling" in text
    ) and "test_deformable_roi" in text
