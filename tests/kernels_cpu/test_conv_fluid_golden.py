"""conv / pool / norm layers reproduce the real Fluid 1.8.5's outputs (golden data in data/)."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from oar import fluid

DATA = Path(__file__).parent / "data"
_spec = importlib.util.spec_from_file_location(
    "fluid18_conv_golden", DATA / "fluid18_conv_golden.py"
)
golden = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(golden)

NAMES = [
    "conv2d_transpose_same",
    "conv2d_transpose_pad4",
    "conv2d_transpose_groups_output_size",
    "pool2d_avg_same",
    "pool2d_max_same",
    "conv2d_nhwc_same_stride2",
    "conv2d_dilation_same",
    "depthwise_conv2d",
    "lrn",
    "batch_norm_nhwc",
    "adaptive_max_pool2d",
    "adaptive_max_pool2d_index",
    "resize_bilinear_half_pixel",
    "resize_bilinear_scale",
    "resize_nearest",
    "image_resize_nearest_nhwc",
    "pool2d_avg_ceil_inclusive",
    "adaptive_avg_pool2d",
]


@pytest.fixture(scope="module")
def results():
    with fluid.unique_name.guard():
        main, startup, feed, outs = golden.build(fluid)
    exe, scope = fluid.Executor(fluid.CPUPlace()), fluid.Scope()
    exe.run(startup, scope=scope)
    got = exe.run(main, feed=feed, fetch_list=outs, scope=scope)
    expected = np.load(DATA / "fluid18_conv_golden.npz")
    return got, [expected[f"arr_{i}"] for i in range(len(outs))]


@pytest.mark.parametrize("i", range(len(NAMES)), ids=NAMES)
def test_matches_fluid18(results, i):
    got, expected = results
    assert got[i].shape == expected[i].shape
    assert got[i].dtype == expected[i].dtype
    np.testing.assert_allclose(got[i], expected[i], rtol=1e-4, atol=1e-5)
