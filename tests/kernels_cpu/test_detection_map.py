"""detection_map against hand-computed average precision, and DetectionMAP's bad input
(Fluid 1.8.5's numbers are in test_detection_map_fluid_golden.py)."""

import numpy as np
import pytest
from oar import fluid
from oar.errors import OarError
from oar.metrics.detection_map import DetectionMAP
from oar.testing import OpCase, check_case

BOX = [0.1, 0.1, 0.4, 0.4]
# image 0: two class-1 ground truths; a hit (0.9), a duplicate of it (0.8), a miss (0.7)
DET = np.array([[1, 0.9, *BOX], [1, 0.8, *BOX], [1, 0.7, 0.6, 0.6, 0.9, 0.9]], "float32")
LABEL = np.array([[1, 0, *BOX], [1, 0, 0.5, 0.0, 0.6, 0.2]], "float32")


def _case(ap_type, expected):
    return OpCase(
        "detection_map",
        {"DetectRes": DET, "Label": LABEL},
        {"class_num": 3, "ap_type": ap_type},
        ref=lambda **_: {
            "MAP": np.array([expected], "float32"),
            "AccumPosCount": np.array([[0], [2], [0]], "int32"),
            "AccumTruePos": np.array([[0.9, 1], [0.8, 0], [0.7, 0]], "float32"),
            "AccumFalsePos": np.array([[0.9, 0], [0.8, 1], [0.7, 1]], "float32"),
        },
        lod={"detectres_0": [[3]], "label_0": [[2]]},
        name=ap_type,
    )


# precision 1, 1/2, 1/3 at recall 1/2: integral 0.5; 11-point: 6 of 11 points have precision 1
CASES = [_case("integral", 0.5), _case("11point", 6 / 11)]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_detection_map(case):
    check_case(case)


def _build(fn):
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        return fn()


def _vars(det_width=6):
    return (
        fluid.data("d", [-1, det_width], "float32", lod_level=1),
        fluid.data("l", [-1, 1], "float32", lod_level=1),
        fluid.data("b", [-1, 4], "float32", lod_level=1),
    )


BAD = [
    (lambda: DetectionMAP(*_vars(), class_num=None), "class_num"),
    (lambda: DetectionMAP(*_vars(), class_num=3, ap_version="voc"), "ap_version"),
    (lambda: DetectionMAP(*_vars(5), class_num=3), "DetectRes"),
]


@pytest.mark.parametrize("fn,match", BAD)
def test_bad_input(fn, match):
    with pytest.raises(OarError, match=match) as info:
        _build(fn)
    assert "detection_map" in str(info.value) or "DetectionMAP" in str(info.value)
