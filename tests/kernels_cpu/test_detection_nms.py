"""NMS ops against hand-worked cases, the LoD-scores form, dygraph, and bad input (numbers
against Fluid 1.8.5 are in test_detection_nms_fluid_golden.py)."""

import numpy as np
import pytest
from oar import fluid
from oar.testing import OpCase, assert_layer_refuses, check_case, run_forward

# three boxes: 0 and 1 overlap (IoU 0.6), 2 apart
BOXES = np.array([[0, 0, 1, 1], [0, 0.1, 1, 1.1], [2, 2, 3, 3]], "float32")
IOU01 = 0.9 / 1.1
SCORES = np.array([[0.9, 0.9, 0.9], [0.8, 0.7, 0.6], [0.3, 0.95, 0.2]], "float32")  # [C, M]


def _row(c, s, b):
    return [c, s, *BOXES[b]]


def _nms_ref(expected_rows):
    return lambda **_: {"Out": np.array(expected_rows, "float32")}


CASES = [
    # class 0 is background; class 1 keeps 0 and 2 (1 is suppressed by 0); class 2 keeps 1 and 0
    # is suppressed (IoU > 0.5); 2 falls under the score threshold
    OpCase(
        "multiclass_nms",
        {"BBoxes": BOXES[None], "Scores": SCORES[None]},
        {"score_threshold": 0.25, "nms_top_k": -1, "keep_top_k": -1, "nms_threshold": 0.5},
        ref=_nms_ref([_row(1, 0.8, 0), _row(1, 0.6, 2), _row(2, 0.95, 1)]),
        name="suppress",
    ),
    # keep_top_k 2: the best two of all classes, still grouped by class
    OpCase(
        "multiclass_nms",
        {"BBoxes": BOXES[None], "Scores": SCORES[None]},
        {"score_threshold": 0.25, "nms_top_k": -1, "keep_top_k": 2, "nms_threshold": 0.5},
        ref=_nms_ref([_row(1, 0.8, 0), _row(2, 0.95, 1)]),
        name="keep_top_k",
    ),
    # a threshold above IoU01 keeps overlapping boxes
    OpCase(
        "multiclass_nms2",
        {"BBoxes": BOXES[None], "Scores": SCORES[None]},
        {"score_threshold": 0.25, "nms_top_k": -1, "keep_top_k": -1, "nms_threshold": 0.9,
         "background_label": -1},
        ref=lambda **_: {
            "Out": np.array([_row(0, 0.9, 0), _row(0, 0.9, 1), _row(0, 0.9, 2), _row(1, 0.8, 0),
                             _row(1, 0.7, 1), _row(1, 0.6, 2), _row(2, 0.95, 1), _row(2, 0.3, 0)],
                            "float32"),
            "Index": np.array([[0], [1], [2], [0], [1], [2], [1], [0]], "int32"),
        },
        name="no_background",
    ),
    # linear matrix NMS: box 1 (class 1) decays by (1 - IoU01), box 2 does not overlap
    OpCase(
        "matrix_nms",
        {"BBoxes": BOXES[None], "Scores": SCORES[None]},
        {"score_threshold": 0.5, "post_threshold": 0.0, "nms_top_k": -1, "keep_top_k": -1,
         "background_label": 0},
        ref=lambda **_: {
            "Out": np.array([_row(2, 0.95, 1), _row(1, 0.8, 0), _row(1, 0.6, 2),
                             _row(1, 0.7 * (1 - IOU01), 1)], "float32"),
            "Index": np.array([[1], [0], [2], [1]], "int32"),
        },
    ),
]  # fmt: skip


# locality-aware: boxes 0 and 1 (IoU 0.82) merge, weighted by score; box 2 stays apart
CASES.append(
    OpCase(
        "locality_aware_nms",
        {"BBoxes": BOXES[None], "Scores": np.array([[[0.9, 0.7, 0.6]]], "float32")},
        {"score_threshold": 0.1, "nms_top_k": -1, "keep_top_k": -1, "nms_threshold": 0.3,
         "background_label": -1},
        ref=lambda **_: {
            "Out": np.array([[0, 1.6, *((BOXES[0] * 0.9 + BOXES[1] * 0.7) / 1.6)], _row(0, 0.6, 2)], "float32")
        },
    )
)  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=str)
def test_detection_nms(case):
    check_case(case)


def test_lod_scores_form_matches_the_batched_form():
    """Scores [M, C] with a LoD of images and boxes [M, C, 4] (per-class boxes, as R-CNN heads)."""
    attrs = {"score_threshold": 0.25, "nms_top_k": -1, "keep_top_k": -1, "nms_threshold": 0.5}
    two = np.concatenate([BOXES, BOXES[::-1]])
    scores = np.concatenate([SCORES.T, SCORES.T[::-1]])  # [6, C]
    per_class = np.repeat(two[:, None, :], 3, axis=1)
    lod_case = OpCase(
        "multiclass_nms", {"BBoxes": per_class, "Scores": scores}, attrs, lod={"scores_0": [[3, 3]]}
    )
    batched = OpCase(
        "multiclass_nms",
        {"BBoxes": np.stack([BOXES, BOXES[::-1]]), "Scores": np.stack([SCORES, SCORES[:, ::-1]])},
        attrs,
    )
    np.testing.assert_array_equal(run_forward(lod_case)["Out"][0], run_forward(batched)["Out"][0])


def test_dygraph_multiclass_nms():
    with fluid.dygraph.guard():
        b = fluid.dygraph.to_variable(BOXES[None])
        s = fluid.dygraph.to_variable(SCORES[None])
        out = fluid.layers.multiclass_nms(b, s, 0.25, -1, 2, 0.5)
        np.testing.assert_allclose(out.numpy(), [_row(1, 0.8, 0), _row(2, 0.95, 1)], rtol=1e-6)


def _b(m=10, d=4):
    return fluid.data("b", [2, m, d], "float32")


def _s(m=10):
    return fluid.data("s", [2, 3, m], "float32")


BAD = [
    ("multiclass_nms", lambda L: L.multiclass_nms(_b(9), _s(), 0.1, 5, 5), "number of boxes"),
    ("multiclass_nms", lambda L: L.multiclass_nms(_b(d=5), _s(), 0.1, 5, 5), "last dim"),
    ("multiclass_nms", lambda L: L.multiclass_nms(_b(), fluid.data("s1", [10]), 0.1, 5, 5), "Scores"),
    ("multiclass_nms", lambda L: L.multiclass_nms(_b(), _s(), 0.1, -2, 5), "nms_top_k"),
    ("multiclass_nms", lambda L: L.multiclass_nms(_b(), _s(), 0.1, 5, 5, nms_eta=0.0), "nms_eta"),
    ("multiclass_nms", lambda L: L.multiclass_nms(_b(), _s(), "high", 5, 5), "score_threshold"),
    ("matrix_nms", lambda L: L.matrix_nms(_b(), _s(8), 0.1, 0.1, 5, 5), "number of boxes"),
    ("multiclass_nms2", lambda L: fluid.contrib.multiclass_nms2(_b(), _s(), 0.1, 5.5, 5), "nms_top_k"),
    ("detection_output", lambda L: L.detection_output(fluid.data("l", [2, 4]), _s(), _b(), None),
     "loc must be"),
]  # fmt: skip


@pytest.mark.parametrize("layer,fn,match", BAD, ids=[f"{b[0]}-{i}" for i, b in enumerate(BAD)])
def test_bad_input_names_layer_and_line(layer, fn, match):
    assert_layer_refuses(layer, fn, match, __file__)
