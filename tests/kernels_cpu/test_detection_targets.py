"""SSD target ops against hand-worked cases, and bad input (numbers against Fluid 1.8.5 are
in test_detection_targets_fluid_golden.py)."""

import numpy as np
import pytest
from oar import fluid
from oar.testing import OpCase, assert_layer_refuses, check_case

# image 0: 2 ground-truth rows x 4 priors; image 1: 1 row
DIST = np.array([[0.9, 0.6, 0.1, 0.0], [0.8, 0.7, 0.55, 0.2], [0.3, 0.0, 0.4, 0.6]], "float32")
LOD = {"distmat_0": [[2, 1]]}

CASES = [
    # greedy: (0,0)=0.9 first, then row 1's best free column is 1 (0.7); image 1: column 3
    OpCase(
        "bipartite_match",
        {"DistMat": DIST},
        ref=lambda **_: {
            "ColToRowMatchIndices": np.array([[0, 1, -1, -1], [-1, -1, -1, 0]], "int32"),
            "ColToRowMatchDist": np.array([[0.9, 0.7, 0, 0], [0, 0, 0, 0.6]], "float32"),
        },
        lod=LOD,
    ),
    # per_prediction then matches each free column to its best row when >= 0.5
    OpCase(
        "bipartite_match",
        {"DistMat": DIST},
        {"match_type": "per_prediction", "dist_threshold": 0.5},
        ref=lambda **_: {
            "ColToRowMatchIndices": np.array([[0, 1, 1, -1], [-1, -1, -1, 0]], "int32"),
            "ColToRowMatchDist": np.array([[0.9, 0.7, 0.55, 0], [0, 0, 0, 0.6]], "float32"),
        },
        lod=LOD,
        name="per_prediction",
    ),
    OpCase(
        "target_assign",
        {
            "X": np.arange(3 * 4 * 2, dtype="float32").reshape(3, 4, 2),
            "MatchIndices": np.array([[1, -1, 0, -1], [-1, 0, -1, -1]], "int32"),
        },
        {"mismatch_value": 7},
        ref=lambda X, **_: {
            "Out": np.array(
                [[X[1, 0], [7, 7], X[0, 2], [7, 7]], [[7, 7], X[2, 1], [7, 7], [7, 7]]], "float32"
            ),
            "OutWeight": np.array([[1, 0, 1, 0], [0, 1, 0, 0]], "float32")[..., None],
        },
        lod={"x_0": [[2, 1]]},
    ),
    OpCase(
        "mine_hard_examples",
        {
            "ClsLoss": np.array([[0.1, 0.9, 0.5, 0.7, 0.3]], "float32"),
            "MatchIndices": np.array([[0, -1, -1, -1, -1]], "int32"),
            "MatchDist": np.array([[0.8, 0.1, 0.2, 0.6, 0.0]], "float32"),
        },
        {"neg_pos_ratio": 2.0, "neg_dist_threshold": 0.5},
        # one positive -> two negatives among priors 1, 2, 4 (3 overlaps too much): 1 and 2
        ref=lambda MatchIndices, **_: {
            "NegIndices": np.array([[1], [2]], "int32"),
            "UpdatedMatchIndices": MatchIndices,
        },
    ),
]


_ROIS = np.array(
    [[0, 0, 9, 9], [5, 5, 14, 14], [20, 20, 29, 29], [0, 0, 19, 19], [2, 1, 11, 10]], "float32"
)
_GTS = np.array([[1, 1, 10, 10], [21, 19, 30, 28]], "float32")


def _labels_ref(**_):
    # foreground: the two ground truths, then ROI 0 (IoU 0.68 with gt 0); ROIs 2 and 4 are
    # foreground too but over the cap of 6 * 0.5; background: ROIs 1 and 3 (IoU < 0.5)
    targets = np.zeros((5, 12), "float32")
    targets[2, 4:8] = [0.1 / 0.1, 0.1 / 0.1, 0, 0]  # ROI 0 against gt 0: centres 1 px apart
    weights = np.zeros((5, 12), "float32")
    weights[0, 4:8] = weights[2, 4:8] = weights[1, 8:12] = 1
    return {
        "Rois": np.concatenate([_GTS, _ROIS[[0, 1, 3]]]),
        "LabelsInt32": np.array([[1], [2], [1], [0], [0]], "int32"),
        "BboxTargets": targets,
        "BboxInsideWeights": weights,
        "BboxOutsideWeights": weights,
    }


CASES.append(
    OpCase(
        "generate_proposal_labels",
        {"RpnRois": _ROIS, "GtClasses": np.array([[1], [2]], "int32"), "IsCrowd": np.zeros((2, 1), "int32"),
         "GtBoxes": _GTS, "ImInfo": np.array([[40, 40, 1.0]], "float32")},
        {"batch_size_per_im": 6, "fg_fraction": 0.5, "fg_thresh": 0.5, "bg_thresh_hi": 0.5, "bg_thresh_lo": 0.0,
         "class_nums": 3, "use_random": False},
        ref=_labels_ref,
        lod={"rpnrois_0": [[5]], "gtboxes_0": [[2]]},
    )
)  # fmt: skip


# one image, one object: a square polygon filling ROI 0 (class 2); ROI 1 is background
_SQUARE = np.array([[1, 1], [9, 1], [9, 9], [1, 9]], "float32")
CASES.append(
    OpCase(
        "generate_mask_labels",
        {"ImInfo": np.array([[20, 20, 1.0]], "float32"), "GtClasses": np.array([[2]], "int32"),
         "IsCrowd": np.zeros((1, 1), "int32"), "GtSegms": _SQUARE,
         "Rois": np.array([[1, 1, 9, 9], [10, 10, 19, 19]], "float32"),
         "LabelsInt32": np.array([[2], [0]], "int32")},
        {"num_classes": 3, "resolution": 4},
        ref=lambda Rois, **_: {
            "MaskRois": Rois[:1],
            "RoiHasMaskInt32": np.array([[0]], "int32"),
            # slots of classes 0 and 1 ignored (-1), class 2's the full square
            "MaskInt32": np.concatenate([np.full(32, -1), np.ones(16)]).astype("int32")[None],
        },
        lod={"gtsegms_0": [[1], [1], [4]], "rois_0": [[2]]},
    )
)  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=str)
def test_detection_targets(case):
    check_case(case)


_NAMES = iter(range(10**6))


def _d(shape, dtype="float32", lod=0):
    return fluid.data(f"v{next(_NAMES)}", shape, dtype, lod_level=lod)


BAD = [
    ("bipartite_match", lambda L: L.bipartite_match(_d([-1], lod=1)), "DistMat"),
    ("bipartite_match", lambda L: L.bipartite_match(_d([-1, 4], lod=1), "best"), "match_type"),
    ("target_assign", lambda L: L.target_assign(_d([-1, 4, 2], lod=1), _d([2, 4, 1], "int32")),
     "MatchIndices"),
    ("target_assign", lambda L: L.target_assign(_d([-1, 4, 2], lod=1), _d([2, 4], "int64")), "int32"),
    ("target_assign", lambda L: L.target_assign(_d([-1, 4, 2], lod=1), _d([2, 4], "int32"),
                                                mismatch_value=0.5), "mismatch_value"),
    ("ssd_loss", lambda L: L.ssd_loss(_d([2, 8]), _d([2, 8, 3]), _d([-1, 4], lod=1),
                                      _d([-1, 1, 1], "int32", 1), _d([8, 4, 1, 1])), "location"),
    ("ssd_loss", lambda L: L.ssd_loss(_d([2, 8, 4]), _d([2, 8, 3]), _d([-1, 4], lod=1),
                                      _d([-1, 1, 1], "int32", 1), _d([8, 4, 1]),
                                      mining_type="hard_example"), "mining_type"),
    ("multi_box_head", lambda L: L.multi_box_head([_d([1, 3, 4, 4])], _d([1, 3, 32, 32, 1]), 32, 3,
                                                  [[2.0]]), "min_sizes"),
    ("multi_box_head", lambda L: L.multi_box_head([_d([1, 3, 4, 4])], _d([1, 3, 32, 32, 1]), 32, 3,
                                                  [[2.0], [3.0]], min_sizes=[4.0], max_sizes=[8.0]),
     "aspect_ratios"),
]  # fmt: skip


@pytest.mark.parametrize("layer,fn,match", BAD, ids=[f"{b[0]}-{i}" for i, b in enumerate(BAD)])
def test_bad_input_names_layer_and_line(layer, fn, match):
    assert_layer_refuses(layer, fn, match, __file__)
