"""Region-proposal ops against hand-worked cases, and bad input (numbers against Fluid 1.8.5
are in test_detection_rpn_fluid_golden.py)."""

import numpy as np
import pytest
from oar import fluid
from oar.testing import OpCase, assert_layer_refuses, check_case

# one image, a 1 x 2 map with 1 anchor each: two 16 x 16 anchors, zero deltas
ANCHORS = np.array([[[[0, 0, 15, 15]], [[8, 0, 23, 15]]]], "float32")  # [H, W, A, 4]
RPN = {
    "Scores": np.array([[[[0.3, 0.9]]]], "float32"),
    "BboxDeltas": np.zeros((1, 4, 1, 2), "float32"),
    "ImInfo": np.array([[16, 20, 1.0]], "float32"),
    "Anchors": ANCHORS,
    "Variances": np.ones_like(ANCHORS),
}
CASES = [
    # IoU of the two anchors (clipped to x <= 19): 8 x 16 / (16 x 16 + 12 x 16 - 8 x 16) = 0.4
    OpCase(
        "generate_proposals",
        RPN,
        {"pre_nms_topN": 10, "post_nms_topN": 10, "nms_thresh": 0.5, "min_size": 1.0},
        ref=lambda **_: {
            "RpnRois": np.array([[8, 0, 19, 15], [0, 0, 15, 15]], "float32"),
            "RpnRoiProbs": np.array([[0.9], [0.3]], "float32"),
        },
        name="both_kept",
    ),
    OpCase(
        "generate_proposals",
        RPN,
        {"pre_nms_topN": 10, "post_nms_topN": 10, "nms_thresh": 0.3, "min_size": 1.0},
        ref=lambda **_: {"RpnRois": np.array([[8, 0, 19, 15]], "float32")},
        name="suppressed",
    ),
    OpCase(
        "distribute_fpn_proposals",
        {
            "FpnRois": np.array(
                [[0, 0, 15, 15], [0, 0, 63, 63], [0, 0, 223, 223], [0, 0, 31, 31]], "float32"
            )
        },
        {"min_level": 2, "max_level": 5, "refer_level": 4, "refer_scale": 224},
        outputs={"MultiFpnRois": 4},
        # sides 16, 64, 224, 32 -> levels 4 + log2(side / 224): 2 (clipped), 2, 4, 2
        ref=lambda FpnRois, **_: {
            "MultiFpnRois": [
                FpnRois[[0, 1, 3]],
                np.zeros((0, 4), "float32"),
                FpnRois[[2]],
                np.zeros((0, 4), "float32"),
            ],
            "RestoreIndex": np.array([[0], [1], [3], [2]], "int32"),
        },  # fmt: skip
        lod={"fpnrois_0": [[4]]},
    ),
]


_LEVEL_ROIS = [
    np.arange(12, dtype="float32").reshape(3, 4),
    np.arange(8, dtype="float32").reshape(2, 4) + 100,
]
CASES += [
    # the best three of the batch: 0.9 (image 0), 0.8 (image 0), 0.5 (image 1)
    OpCase(
        "collect_fpn_proposals",
        {
            "MultiLevelRois": _LEVEL_ROIS,
            "MultiLevelScores": [
                np.array([[0.1], [0.9], [0.5]], "float32"),
                np.array([[0.8], [0.2]], "float32"),
            ],
        },
        {"min_level": 2, "max_level": 3, "post_nms_topN": 3},
        ref=lambda **_: {
            "FpnRois": np.stack([_LEVEL_ROIS[0][1], _LEVEL_ROIS[1][0], _LEVEL_ROIS[0][2]])
        },
        lod={"multilevelrois_0": [[2, 1]], "multilevelrois_1": [[1, 1]]},
    ),
    # one level, one anchor, zero deltas: the anchor itself, labelled 1 (classes count from 1)
    OpCase(
        "retinanet_detection_output",
        {
            "BBoxes": [np.zeros((1, 2, 4), "float32")],
            "Scores": [np.array([[[0.8], [0.01]]], "float32")],
            "Anchors": [np.array([[0, 0, 9, 9], [4, 4, 12, 12]], "float32")],
            "ImInfo": np.array([[20, 20, 1.0]], "float32"),
        },
        {"score_threshold": 0.05, "nms_top_k": 10, "keep_top_k": 10, "nms_threshold": 0.3},
        ref=lambda **_: {"Out": np.array([[1, 0.8, 0, 0, 9, 9]], "float32")},
    ),
]


# anchors 2 and 5 are the best of the two ground truths (foreground), 1 and 3 overlap less
# than 0.3 (background), 0 is in between, 4 crosses the 40 x 40 image border
CASES.append(
    OpCase(
        "rpn_target_assign",
        {
            "Anchor": np.array([[0, 0, 9, 9], [5, 5, 14, 14], [20, 20, 29, 29], [0, 0, 19, 19],
                                [30, 30, 45, 45], [2, 1, 11, 10]], "float32"),
            "GtBoxes": np.array([[1, 1, 10, 10], [21, 19, 30, 28]], "float32"),
            "IsCrowd": np.zeros((2, 1), "int32"),
            "ImInfo": np.array([[40, 40, 1.0]], "float32"),
        },
        {"rpn_batch_size_per_im": 8, "rpn_fg_fraction": 0.5, "use_random": False},
        ref=lambda **_: {
            "LocationIndex": np.array([2, 5], "int32"),
            "ScoreIndex": np.array([2, 5, 1, 3], "int32"),
            "TargetLabel": np.array([[1], [1], [0], [0]], "int32"),
            "TargetBBox": np.array([[0.1, -0.1, 0, 0], [-0.1, 0, 0, 0]], "float32"),
            "BBoxInsideWeight": np.ones((2, 4), "float32"),
        },
        lod={"gtboxes_0": [[2]]},
    )
)  # fmt: skip


# RetinaNet: the same anchors, classes 2 and 1; the border-crossing anchor 4 is background too
CASES.append(
    OpCase(
        "retinanet_target_assign",
        {**{k: CASES[-1].inputs[k] for k in ("Anchor", "GtBoxes", "IsCrowd", "ImInfo")},
         "GtLabels": np.array([[2], [1]], "int32")},
        {"positive_overlap": 0.5, "negative_overlap": 0.4},
        ref=lambda **_: {
            "LocationIndex": np.array([0, 2, 5], "int32"),
            "ScoreIndex": np.array([0, 2, 5, 1, 3, 4], "int32"),
            "TargetLabel": np.array([[2], [1], [2], [0], [0], [0]], "int32"),
            "ForegroundNumber": np.array([[4]], "int32"),
        },
        lod={"gtboxes_0": [[2]]},
    )
)  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=str)
def test_detection_rpn(case):
    check_case(case)


def _gp(a=3, deltas=12):
    return (fluid.data("s", [1, a, 4, 4], "float32"), fluid.data("d", [1, deltas, 4, 4], "float32"),
            fluid.data("i", [1, 3], "float32"), fluid.data("a", [4, 4, a, 4], "float32"),
            fluid.data("v", [4, 4, a, 4], "float32"))  # fmt: skip


BAD = [
    ("generate_proposals", lambda L: L.generate_proposals(*_gp(deltas=10)), "4 channels per anchor"),
    ("generate_proposals", lambda L: L.generate_proposals(*_gp(), pre_nms_top_n=1.5), "pre_nms_top_n"),
    ("distribute_fpn_proposals", lambda L: L.distribute_fpn_proposals(fluid.data("r", [-1, 4], lod_level=1), 5, 2, 4, 224), "max_level"),
    ("retinanet_detection_output", lambda L: L.retinanet_detection_output(
        [fluid.data("b0", [1, 8, 4])], [fluid.data("s0", [1, 6, 3])], [fluid.data("a0", [8, 4])],
        fluid.data("ii", [1, 3])), "anchors"),
    ("retinanet_detection_output", lambda L: L.retinanet_detection_output(
        fluid.data("b1", [1, 8, 4]), [], [], fluid.data("ii", [1, 3])), "list of variables"),
    ("rpn_target_assign", lambda L: L.rpn_target_assign(
        fluid.data("bp", [1, 8, 4]), fluid.data("cl", [1, 8, 1]), fluid.data("an", [8, 5]), fluid.data("av", [8, 4]),
        fluid.data("gb", [-1, 4], lod_level=1), fluid.data("ic", [-1, 1], "int32", lod_level=1),
        fluid.data("ii", [1, 3])), "Anchor must be"),
    ("collect_fpn_proposals", lambda L: L.collect_fpn_proposals([fluid.data("r", [-1, 4])], [], 2, 3, 10), "per level"),
]  # fmt: skip


@pytest.mark.parametrize("layer,fn,match", BAD, ids=[f"{b[0]}-{i}" for i, b in enumerate(BAD)])
def test_bad_input_names_layer_and_line(layer, fn, match):
    assert_layer_refuses(layer, fn, match, __file__)
