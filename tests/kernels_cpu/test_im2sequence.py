"""im2sequence against a loop over patches, and Fluid 1.8.5's numbers (with and without the
real image sizes)."""

import numpy as np
import pytest
from oar import fluid
from oar.testing import OpCase, check_case

rng = np.random.default_rng(81)


def _ref(X, kernels, strides, paddings, **_):
    kh, kw = kernels
    sh, sw = strides
    up, left, down, right = paddings
    xp = np.pad(X, ((0, 0), (0, 0), (up, down), (left, right)))
    rows = []
    for img in xp:
        for p in range(0, xp.shape[2] - kh + 1, sh):
            for q in range(0, xp.shape[3] - kw + 1, sw):
                rows.append(img[:, p : p + kh, q : q + kw].reshape(-1))
    return {"Out": np.array(rows)}


CASES = [
    OpCase(
        "im2sequence",
        {"X": rng.standard_normal((2, 2, 3, 4))},
        {"kernels": [2, 2], "strides": [1, 2], "paddings": [1, 0, 0, 1]},
        ref=_ref,
        grad=["X"],
    ),
    OpCase(
        "im2sequence",
        {"X": rng.standard_normal((1, 3, 5, 5))},
        {"kernels": [3, 2], "strides": [2, 1], "paddings": [0, 0, 0, 0]},
        ref=_ref,
        grad=["X"],
        name="3x2",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_im2sequence(case):
    check_case(case)


def _run(x, build, feed):
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        out = build()
    return fluid.Executor(fluid.CPUPlace()).run(
        main, feed=feed, fetch_list=[out], return_numpy=False
    )[0]


def test_equals_fluid_1_8_5():
    xv = np.arange(48, dtype="float32").reshape(2, 2, 3, 4)

    def build():
        x = fluid.data("x", [None, 2, 3, 4], "float32")
        return fluid.layers.im2sequence(x, filter_size=[2, 2], stride=[1, 2], padding=[1, 0, 0, 1])

    out = _run(xv, build, {"x": xv})
    assert out.recursive_sequence_lengths() == [[6, 6]]
    assert np.array(out)[:3].tolist() == [
        [0, 0, 0, 1, 0, 0, 12, 13],
        [0, 0, 2, 3, 0, 0, 14, 15],
        [0, 1, 4, 5, 12, 13, 16, 17],
    ]


def test_real_image_sizes_equal_fluid_1_8_5():
    xv = np.arange(72, dtype="float32").reshape(2, 1, 6, 6)

    def build():
        x = fluid.data("x", [None, 1, 6, 6], "float32")
        y = fluid.data("y", [None, 2], "float32")
        return fluid.layers.im2sequence(
            x, filter_size=[2, 2], stride=[2, 2], input_image_size=y, out_stride=[2, 1]
        )

    out = _run(xv, build, {"x": xv, "y": np.array([[8, 6], [4, 5]], "float32")})
    assert out.recursive_sequence_lengths() == [[6, 2]]
    assert np.array(out).tolist() == [
        [0, 1, 6, 7], [2, 3, 8, 9], [4, 5, 10, 11], [12, 13, 18, 19],
        [14, 15, 20, 21], [16, 17, 22, 23], [36, 37, 42, 43], [38, 39, 44, 45],
    ]  # fmt: skip
