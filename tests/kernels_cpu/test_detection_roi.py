"""ROI pooling ops: numeric gradient checks, ROI-to-image mapping and bad input (numbers
against Fluid 1.8.5 are in test_detection_roi_fluid_golden.py)."""

import numpy as np
import pytest
from oar import fluid
from oar.errors import OarError
from oar.testing import OpCase, assert_layer_refuses, check_case, run_forward

RNG = np.random.RandomState(9)
X = RNG.rand(2, 2, 5, 5)  # float64 for the numeric gradient
ROIS = np.array([[0.5, 1.0, 4.2, 4.6], [2.0, 0.3, 5.5, 3.7], [1.0, 1.0, 3.0, 4.0]])
LOD = {"rois_0": [[2, 1]]}


def _avg_ref(X, ROIs, pooled_height, pooled_width, spatial_scale, **_):
    """prroi_pool by brute-force numeric integration of the bilinear map (fine midpoint grid)."""
    img = [0, 0, 1]
    out = np.zeros((len(ROIs), X.shape[1], pooled_height, pooled_width))
    h, w = X.shape[2:]
    pad = np.pad(X, ((0, 0), (0, 0), (0, 2), (0, 2)))  # points off the map are 0
    k = 60
    for r, (x1, y1, x2, y2) in enumerate(ROIs * spatial_scale):
        bh, bw = (y2 - y1) / pooled_height, (x2 - x1) / pooled_width
        for i in range(pooled_height):
            for j in range(pooled_width):
                ys = y1 + bh * (i + (np.arange(k) + 0.5) / k)
                xs = x1 + bw * (j + (np.arange(k) + 0.5) / k)
                y0, x0 = np.floor(ys).astype(int), np.floor(xs).astype(int)
                fy, fx = ys - y0, xs - x0
                f = pad[img[r]]
                v = (f[:, y0][:, :, x0] * ((1 - fy)[:, None] * (1 - fx)[None])
                     + f[:, y0 + 1][:, :, x0] * (fy[:, None] * (1 - fx)[None])
                     + f[:, y0][:, :, x0 + 1] * ((1 - fy)[:, None] * fx[None])
                     + f[:, y0 + 1][:, :, x0 + 1] * (fy[:, None] * fx[None]))  # fmt: skip
                out[r, :, i, j] = v.mean(axis=(1, 2))
    return {"Out": out}


ATTRS = {"pooled_height": 2, "pooled_width": 3, "spatial_scale": 1.0}
CASES = [
    OpCase(
        "roi_align", {"X": X, "ROIs": ROIS}, {**ATTRS, "sampling_ratio": 2}, grad=["X"], lod=LOD
    ),
    OpCase("roi_align", {"X": X, "ROIs": ROIS}, ATTRS, grad=["X"], lod=LOD, name="adaptive"),
    OpCase("roi_pool", {"X": X, "ROIs": ROIS}, ATTRS, grad=["X"], lod=LOD),
    OpCase(
        "psroi_pool",
        {"X": RNG.rand(2, 4, 5, 5), "ROIs": ROIS},
        {"output_channels": 1, "pooled_height": 2, "pooled_width": 2, "spatial_scale": 1.0},
        grad=["X"],
        lod=LOD,
    ),
    OpCase(
        "prroi_pool",
        {"X": X, "ROIs": ROIS},
        ATTRS,
        ref=_avg_ref,
        grad=["X", "ROIs"],
        lod=LOD,
        rtol=1e-3,
        atol=1e-4,
    ),
]


CASES.append(
    OpCase(
        "roi_perspective_transform",
        {"X": X, "ROIs": np.array([[0.3, 0.4, 3.6, 0.9, 4.1, 3.8, 0.6, 3.3], [1.2, 0.5, 3.9, 1.1, 3.4, 4.2, 0.8, 3.6],
                                   [0.5, 0.5, 2.5, 0.6, 2.9, 2.7, 0.2, 2.4]])},
        {"transformed_height": 3, "transformed_width": 3, "spatial_scale": 1.0},
        grad=["X"],
        grad_outputs=["Out"],
        lod=LOD,
    )
)  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=str)
def test_detection_roi(case):
    check_case(case)


def test_rois_lod_input_equals_the_rois_lod():
    with_lod = OpCase("roi_align", {"X": X, "ROIs": ROIS}, ATTRS, lod=LOD)
    offsets = OpCase(
        "roi_align", {"X": X, "ROIs": ROIS, "RoisLod": np.array([0, 2, 3], "int64")}, ATTRS
    )
    np.testing.assert_array_equal(run_forward(with_lod)["Out"][0], run_forward(offsets)["Out"][0])
    counts = OpCase(
        "prroi_pool", {"X": X, "ROIs": ROIS, "BatchRoINums": np.array([2, 1], "int64")}, ATTRS
    )
    np.testing.assert_allclose(
        run_forward(counts)["Out"][0],
        run_forward(OpCase("prroi_pool", {"X": X, "ROIs": ROIS}, ATTRS, lod=LOD))["Out"][0],
    )


def test_rois_without_lod_on_two_images_is_refused():
    with pytest.raises(OarError, match="no LoD"):
        run_forward(OpCase("roi_pool", {"X": X, "ROIs": ROIS}, ATTRS))


def _x(c=8):
    return fluid.data("x", [2, c, 8, 8], "float32")


def _r(d=4):
    return fluid.data("r", [-1, d], "float32", lod_level=1)


BAD = [
    ("roi_align", lambda L: L.roi_align(_x(), _r(5), 2, 2), "ROIs must be"),
    ("roi_align", lambda L: L.roi_align(_x(), _r(), 0, 2), "pooled_height"),
    ("roi_align", lambda L: L.roi_align(fluid.data("x3", [8, 8, 8]), _r(), 2, 2), "NCHW"),
    ("roi_pool", lambda L: L.roi_pool(_x(), _r(), 2, 2, -1.0), "spatial_scale"),
    ("psroi_pool", lambda L: L.psroi_pool(_x(), _r(), 3, 1.0, 2, 2), "channels"),
    ("prroi_pool", lambda L: L.prroi_pool(_x(), _r(), 1.0, 2.5, 2), "pooled_height"),
    (
        "roi_perspective_transform",
        lambda L: L.roi_perspective_transform(_x(), _r(4), 2, 2),
        "ROIs must be",
    ),
    (
        "roi_perspective_transform",
        lambda L: L.roi_perspective_transform(_x(), _r(8), 0, 2),
        "transformed_height",
    ),
]


@pytest.mark.parametrize("layer,fn,match", BAD, ids=[f"{b[0]}-{i}" for i, b in enumerate(BAD)])
def test_bad_input_names_layer_and_line(layer, fn, match):
    assert_layer_refuses(layer, fn, match, __file__)


def test_dygraph_roi_align_runs_and_backpropagates_like_static():
    x_np = RNG.rand(1, 2, 6, 6).astype("float32")
    rois_np = np.array([[0.5, 1.0, 4.2, 4.6], [2.0, 0.3, 5.5, 3.7]], "float32")
    with fluid.dygraph.guard():
        x = fluid.dygraph.to_variable(x_np)
        x.stop_gradient = False
        out = fluid.layers.roi_align(x, fluid.dygraph.to_variable(rois_np), 2, 3, 1.0, 2)
        fluid.layers.reduce_sum(out).backward()
        eager, grad = out.numpy(), x.gradient()
    case = OpCase("roi_align", {"X": x_np, "ROIs": rois_np}, {**ATTRS, "sampling_ratio": 2})
    np.testing.assert_allclose(eager, run_forward(case)["Out"][0], rtol=1e-6)
    assert grad.shape == x_np.shape and np.isclose(
        grad.sum(), eager.size
    )  # each bin averages weights summing to 1
