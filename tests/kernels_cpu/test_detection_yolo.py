"""yolov3_loss: numeric gradient check (incl. two ground truths on one cell and anchor),
masks, and bad input (numbers against Fluid 1.8.5 are in test_detection_yolo_fluid_golden.py)."""

import numpy as np
import pytest
from oar import fluid
from oar.testing import OpCase, assert_layer_refuses, check_case, run_forward

RNG = np.random.RandomState(4)
ANCHORS = [10, 13, 16, 30, 33, 23]
GT = np.array(
    [[[0.5, 0.5, 0.3, 0.4], [0.55, 0.52, 0.32, 0.38], [0.2, 0.8, 0.1, 0.12], [0, 0, 0, 0]]]
)
ATTRS = {"anchors": ANCHORS, "anchor_mask": [1, 2], "class_num": 2, "ignore_thresh": 0.5,
         "downsample_ratio": 32}  # fmt: skip
CASES = [
    OpCase(
        "yolov3_loss",
        {
            "X": RNG.randn(1, 2 * 7, 3, 3) * 0.5,
            "GTBox": GT,
            "GTLabel": np.array([[1, 0, 1, 0]], "int32"),
        },
        ATTRS,
        grad=["X"],
        grad_outputs=["Loss"],
        grad_rtol=1e-4,
        grad_atol=1e-6,
    ),
    OpCase(
        "yolov3_loss",
        {
            "X": RNG.randn(1, 2 * 7, 3, 3) * 0.5,
            "GTBox": GT,
            "GTLabel": np.array([[0, 0, 1, 0]], "int32"),
            "GTScore": np.array([[0.7, 0.4, 1.0, 0.0]]),
        },
        {**ATTRS, "use_label_smooth": False, "ignore_thresh": 0.2},
        grad=["X"],
        grad_outputs=["Loss"],
        name="score",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_detection_yolo(case):
    check_case(case)


def test_match_mask_names_the_best_anchor_or_minus_one():
    got = run_forward(CASES[0])
    match = got["GTMatchMask"][0]
    assert match.shape == (1, 4) and match[0, 3] == -1  # the padding row
    assert match[0, 0] == match[0, 1] == 2  # the two similar boxes share the widest anchor
    obj = got["ObjectnessMask"][0]
    assert obj.shape == (1, 2, 3, 3) and set(np.unique(obj)) <= {-1.0, 0.0, 1.0}


def _x(c=14):
    return fluid.data("x", [2, c, 4, 4], "float32")


def _gt(d=4):
    return fluid.data("gt", [2, 5, d], "float32")


def _lbl(dtype="int32"):
    return fluid.data("lbl", [2, 5], dtype)


BAD = [
    (
        "yolov3_loss",
        lambda L: L.yolov3_loss(_x(15), _gt(), _lbl(), ANCHORS, [1, 2], 2, 0.5, 32),
        "channels",
    ),
    (
        "yolov3_loss",
        lambda L: L.yolov3_loss(_x(), _gt(5), _lbl(), ANCHORS, [1, 2], 2, 0.5, 32),
        "GTBox",
    ),
    (
        "yolov3_loss",
        lambda L: L.yolov3_loss(_x(), _gt(), _lbl("int64"), ANCHORS, [1, 2], 2, 0.5, 32),
        "int32",
    ),
    (
        "yolov3_loss",
        lambda L: L.yolov3_loss(_x(), _gt(), _lbl(), ANCHORS, [1, 3], 2, 0.5, 32),
        "anchor_mask",
    ),
    (
        "yolov3_loss",
        lambda L: L.yolov3_loss(_x(), _gt(), _lbl(), ANCHORS[:5], [1, 2], 2, 0.5, 32),
        "pairs",
    ),
    (
        "yolov3_loss",
        lambda L: L.yolov3_loss(_x(), _gt(), _lbl(), [1.5, 2], [0], 2, 0.5, 32),
        "list of ints",
    ),
]


@pytest.mark.parametrize("layer,fn,match", BAD, ids=[f"{b[0]}-{i}" for i, b in enumerate(BAD)])
def test_bad_input_names_layer_and_line(layer, fn, match):
    assert_layer_refuses(layer, fn, match, __file__)
