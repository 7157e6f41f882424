"""Box-geometry detection ops on every device, against independent numpy references, and the
errors their layers raise for impossible input (numbers against Fluid 1.8.5 are in
test_detection_boxes_fluid_golden.py)."""

import numpy as np
import pytest
from oar import fluid
from oar.errors import OarError
from oar.testing import OpCase, assert_layer_refuses, check_case

RNG = np.random.RandomState(3)


def _boxes(n, scale=1.0):
    xy = RNG.rand(n, 2) * 0.6 * scale
    return np.concatenate([xy, xy + (RNG.rand(n, 2) * 0.4 + 0.05) * scale], 1).astype("float32")


def _iou_ref(X, Y, box_normalized=True):
    off = 0.0 if box_normalized else 1.0
    out = np.zeros((len(X), len(Y)), "float32")
    for i, a in enumerate(X):
        for j, b in enumerate(Y):
            iw = max(min(a[2], b[2]) - max(a[0], b[0]) + off, 0)
            ih = max(min(a[3], b[3]) - max(a[1], b[1]) + off, 0)
            inter = iw * ih
            area = lambda r: (r[2] - r[0] + off) * (r[3] - r[1] + off)
            out[i, j] = inter / (area(a) + area(b) - inter)
    return {"Out": out}


def _decode_ref(PriorBox, TargetBox, PriorBoxVar=None, **attrs):
    """Normalised decode, priors along dim 1."""
    p = PriorBox
    pw, ph = p[:, 2] - p[:, 0], p[:, 3] - p[:, 1]
    pcx, pcy = p[:, 0] + pw / 2, p[:, 1] + ph / 2
    out = np.zeros_like(TargetBox)
    for i in range(TargetBox.shape[0]):
        for j in range(TargetBox.shape[1]):
            v, t = PriorBoxVar[j], TargetBox[i, j]
            cx, cy = v[0] * t[0] * pw[j] + pcx[j], v[1] * t[1] * ph[j] + pcy[j]
            w, h = np.exp(v[2] * t[2]) * pw[j], np.exp(v[3] * t[3]) * ph[j]
            out[i, j] = [cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2]
    return {"OutputBox": out}


def _polygon_ref(Input):
    n, c, h, w = Input.shape
    out = np.empty_like(Input)
    for k in range(c):
        for i in range(h):
            for j in range(w):
                out[:, k, i, j] = (4 * j if k % 2 == 0 else 4 * i) - Input[:, k, i, j]
    return {"Output": out}


def _yolo_square_ref(X, ImgSize, anchors, class_num, conf_thresh, downsample_ratio, **_):
    """Center of the cell and anchor-sized boxes when every logit is 0 (sigmoid = 0.5)."""
    n, _, h, w = X.shape
    an = len(anchors) // 2
    boxes = np.zeros((n, an, h, w, 4), "float32")
    for b in range(n):
        ih, iw = ImgSize[b]
        for a in range(an):
            for i in range(h):
                for j in range(w):
                    cx, cy = (j + 0.5) * iw / w, (i + 0.5) * ih / h
                    bw = anchors[2 * a] * iw / (downsample_ratio * w)
                    bh = anchors[2 * a + 1] * ih / (downsample_ratio * h)
                    boxes[b, a, i, j] = [
                        max(cx - bw / 2, 0),
                        max(cy - bh / 2, 0),
                        min(cx + bw / 2, iw - 1),
                        min(cy + bh / 2, ih - 1),
                    ]
    scores = np.full((n, an * h * w, class_num), 0.25, "float32")
    return {"Boxes": boxes.reshape(n, -1, 4), "Scores": scores}


PRIOR = _boxes(3)
CASES = [
    OpCase("iou_similarity", {"X": _boxes(4), "Y": _boxes(3)}, ref=_iou_ref),
    OpCase(
        "iou_similarity",
        {"X": _boxes(2, 9.0), "Y": _boxes(5, 9.0)},
        {"box_normalized": False},
        ref=_iou_ref,
        name="pixels",
    ),
    OpCase(
        "box_coder",
        {
            "PriorBox": PRIOR,
            "PriorBoxVar": np.full((3, 4), 0.5, "float32"),
            "TargetBox": (RNG.randn(2, 3, 4) * 0.3).astype("float32"),
        },
        {"code_type": "decode_center_size"},
        ref=_decode_ref,
        rtol=1e-5,
        atol=1e-6,
        name="decode",
    ),
    OpCase(
        "polygon_box_transform",
        {"Input": RNG.rand(2, 4, 3, 2).astype("float32")},
        ref=_polygon_ref,
    ),
    # a 2 x 3 (non-square) grid: x is scaled by the grid's width (Fluid 1.8.5 uses its height)
    OpCase(
        "yolo_box",
        {"X": np.zeros((1, 2 * 7, 2, 3), "float32"), "ImgSize": np.array([[64, 96]], "int32")},
        {"anchors": [10, 20, 40, 30], "class_num": 2, "conf_thresh": 0.1, "downsample_ratio": 8},
        ref=_yolo_square_ref,
        name="non_square",
    ),
    OpCase(
        "prior_box",
        {"Input": np.zeros((1, 1, 2, 3), "float32"), "Image": np.zeros((1, 1, 8, 12), "float32")},
        {"min_sizes": [4.0], "aspect_ratios": [1.0]},
        ref=lambda **_: {
            "Boxes": np.array(
                [
                    [
                        [
                            [
                                (2 + 4 * j - 2) / 12,
                                (2 + 4 * i - 2) / 8,
                                (2 + 4 * j + 2) / 12,
                                (2 + 4 * i + 2) / 8,
                            ]
                        ]
                        for j in range(3)
                    ]
                    for i in range(2)
                ],
                "float32",
            )
        },  # fmt: skip
    ),
    OpCase(
        "density_prior_box",
        {"Input": np.zeros((1, 1, 2, 2), "float32"), "Image": np.zeros((1, 1, 8, 8), "float32")},
        {"densities": [2], "fixed_sizes": [2.0], "fixed_ratios": [1.0], "flatten_to_2d": True},
    ),
    OpCase(
        "anchor_generator",
        {"Input": np.zeros((1, 1, 2, 2), "float32")},
        {"anchor_sizes": [16.0], "aspect_ratios": [1.0], "stride": [16.0, 16.0], "offset": 0.5},
        # a 16 x 16 anchor around centre (16 j + 7.5, 16 i + 7.5): corners +-7.5
        ref=lambda **_: {
            "Anchors": np.array(
                [
                    [[[16 * j, 16 * i, 16 * j + 15, 16 * i + 15]] for j in range(2)]
                    for i in range(2)
                ],
                "float32",
            )
        },
    ),
    OpCase(
        "box_decoder_and_assign",
        {
            "PriorBox": np.array([[0, 0, 9, 19]], "float32"),
            "PriorBoxVar": np.ones((1, 4), "float32"),
            "TargetBox": np.array([[0, 0, 0, 0, 0.1, 0.0, 0.0, 0.0, 0, 0.2, 0, 0]], "float32"),
            "BoxScore": np.array([[0.9, 0.3, 0.6]], "float32"),  # class 0 (background) ignored
        },
        {"box_clip": 4.135},
        # a 10 x 20 pixel prior centred at (5, 10): class 2 shifts it down by 0.2 * 20
        ref=lambda **_: {
            "DecodeBox": np.array([[0, 0, 9, 19, 1, 0, 10, 19, 0, 4, 9, 23]], "float32"),
            "OutputAssignBox": np.array([[0, 4, 9, 23]], "float32"),
        },
    ),
    OpCase(
        "box_clip",
        {
            "Input": np.array([[[-3, 5, 170, 80]]], "float32"),
            "ImInfo": np.array([[30, 50, 0.5]], "float32"),
        },
        ref=lambda **_: {"Output": np.array([[[0, 5, 99, 59]]], "float32")},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_detection_boxes(case):
    check_case(case)


def _img():
    return fluid.data("img", [1, 3, 32, 32], "float32")


def _feat(c=8):
    return fluid.data("feat", [1, c, 4, 4], "float32")


BAD = [
    ("box_coder", lambda L: L.box_coder(fluid.data("p", [3, 4]), [0.1, 0.2], fluid.data("t", [2, 4])),
     "4 numbers"),
    ("box_coder", lambda L: L.box_coder(fluid.data("p", [3, 4]), None, fluid.data("t", [2, 4]), "decode"),
     "code_type"),
    ("box_coder", lambda L: L.box_coder(fluid.data("p", [3, 4]), None, fluid.data("t", [2, 5, 4]),
                                        "decode_center_size"), "prior boxes"),
    ("iou_similarity", lambda L: L.iou_similarity(fluid.data("x", [3, 5]), fluid.data("y", [2, 4])),
     "box corners"),
    ("prior_box", lambda L: L.prior_box(_feat(), _img(), [4.0, 8.0], [6.0]), "one entry per min_size"),
    ("prior_box", lambda L: L.prior_box(_feat(), _img(), [4.0], [3.0]), "greater than"),
    ("prior_box", lambda L: L.prior_box(fluid.data("f", [8, 4, 4]), _img(), [4.0]), "NCHW"),
    ("prior_box", lambda L: L.prior_box(_feat(), _img(), [-4.0]), "positive"),
    ("density_prior_box", lambda L: L.density_prior_box(_feat(), _img(), [2, 3], [4.0], [1.0]),
     "same length"),
    ("anchor_generator", lambda L: L.anchor_generator(_feat(), [32.0], [1.0], stride=[16.0]), "2 numbers"),
    ("yolo_box", lambda L: L.yolo_box(_feat(15), fluid.data("s", [1, 2], "int32"), [10, 13, 16, 30], 3,
                                      0.1, 32), "channels"),
    ("yolo_box", lambda L: L.yolo_box(_feat(16), fluid.data("s", [1, 2], "float32"), [10, 13, 16, 30], 3,
                                      0.1, 32), "int32"),
    ("polygon_box_transform", lambda L: L.polygon_box_transform(_feat(3)), "even"),
]  # fmt: skip


@pytest.mark.parametrize("layer,fn,match", BAD, ids=[f"{b[0]}-{i}" for i, b in enumerate(BAD)])
def test_bad_input_names_layer_and_line(layer, fn, match):
    assert_layer_refuses(layer, fn, match, __file__)


def test_box_clip_without_lod_refuses_several_images():
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        out = fluid.layers.box_clip(fluid.data("b", [3, 4]), fluid.data("i", [2, 3]))
    exe = fluid.Executor(fluid.CPUPlace())
    feed = {"b": np.zeros((3, 4), "float32"), "i": np.ones((2, 3), "float32")}
    with pytest.raises(OarError, match="no LoD"):
        exe.run(main, feed=feed, fetch_list=[out], scope=fluid.Scope())
