"""conv2d / depthwise_conv2d / conv2d_transpose: forward vs a direct numpy reference, numeric gradients."""

import numpy as np
import pytest
from oar.testing import OpCase, check_case

rng = np.random.default_rng(0)


def r(*shape):
    return rng.uniform(-1.0, 1.0, shape).astype("float64")


def _pads(paddings, algorithm, hw, k, s, d):
    if algorithm == "VALID":
        return (0, 0, 0, 0), d
    if algorithm == "SAME":
        p = []
        for size, kk, ss in zip(hw, k, s):
            out = -(-size // ss)
            tot = max((out - 1) * ss + kk - size, 0)
            p += [tot // 2, tot - tot // 2]
        return tuple(p), (1, 1)
    p = list(paddings)
    return (tuple(p) if len(p) == 4 else (p[0], p[0], p[1], p[1])), tuple(d)


def conv_ref(
    Input,
    Filter,
    strides=(1, 1),
    paddings=(0, 0),
    dilations=(1, 1),
    groups=1,
    padding_algorithm="EXPLICIT",
    data_format="NCHW",
    **_,
):
    """Direct convolution: a sum over filter taps (no im2col)."""
    x = Input.transpose(0, 3, 1, 2) if data_format == "NHWC" else Input
    n, c, h, w = x.shape
    oc, cg, kh, kw = Filter.shape
    (t, b, left, right), d = _pads(
        paddings, padding_algorithm, (h, w), (kh, kw), strides, dilations
    )
    xp = np.pad(x, ((0, 0), (0, 0), (t, b), (left, right)))
    oh = (h + t + b - d[0] * (kh - 1) - 1) // strides[0] + 1
    ow = (w + left + right - d[1] * (kw - 1) - 1) // strides[1] + 1
    out = np.zeros((n, oc, oh, ow))
    og = oc // groups
    for gi in range(groups):
        xs = xp[:, gi * cg : (gi + 1) * cg]
        ws = Filter[gi * og : (gi + 1) * og]
        for i in range(kh):
            for j in range(kw):
                patch = xs[
                    :,
                    :,
                    i * d[0] : i * d[0] + strides[0] * (oh - 1) + 1 : strides[0],
                    j * d[1] : j * d[1] + strides[1] * (ow - 1) + 1 : strides[1],
                ]
                out[:, gi * og : (gi + 1) * og] += np.einsum("nchw,oc->nohw", patch, ws[:, :, i, j])
    if data_format == "NHWC":
        out = out.transpose(0, 2, 3, 1)
    return {"Output": out}


def conv_t_ref(
    Input, Filter, strides=(1, 1), paddings=(0, 0), dilations=(1, 1), groups=1, output_size=(), **_
):
    """Transposed convolution by scattering each input pixel's filter response."""
    n, ci, h, w = Input.shape
    _, og, kh, kw = Filter.shape
    t, b, left, right = _pads(paddings, "EXPLICIT", (h, w), (kh, kw), strides, dilations)[0]
    d = dilations
    full = [(h - 1) * strides[0] + d[0] * (kh - 1) + 1, (w - 1) * strides[1] + d[1] * (kw - 1) + 1]
    want = list(output_size) or [full[0] - t - b, full[1] - left - right]
    big = np.zeros(
        (n, og * groups, max(full[0], want[0] + t + b), max(full[1], want[1] + left + right))
    )
    cg = ci // groups
    for gi in range(groups):
        for i in range(kh):
            for j in range(kw):
                contrib = np.einsum(
                    "nchw,co->nohw",
                    Input[:, gi * cg : (gi + 1) * cg],
                    Filter[gi * cg : (gi + 1) * cg, :, i, j],
                )
                big[
                    :,
                    gi * og : (gi + 1) * og,
                    i * d[0] : i * d[0] + strides[0] * (h - 1) + 1 : strides[0],
                    j * d[1] : j * d[1] + strides[1] * (w - 1) + 1 : strides[1],
                ] += contrib
    return {"Output": big[:, :, t : t + want[0], left : left + want[1]]}


G = ["Input", "Filter"]
CASES = [
    OpCase(
        "conv2d",
        {"Input": r(2, 2, 5, 5), "Filter": r(3, 2, 3, 3)},
        ref=conv_ref,
        grad=G,
        name="basic",
    ),
    OpCase(
        "conv2d",
        {"Input": r(1, 2, 6, 5), "Filter": r(2, 2, 3, 2)},
        {"strides": [2, 1], "paddings": [1, 2]},
        ref=conv_ref,
        grad=G,
        name="stride_pad",
    ),
    OpCase(
        "conv2d",
        {"Input": r(1, 2, 5, 6), "Filter": r(2, 2, 2, 3)},
        {"paddings": [1, 0, 2, 1], "dilations": [2, 1]},
        ref=conv_ref,
        grad=G,
        name="pad4_dilation",
    ),
    OpCase(
        "conv2d",
        {"Input": r(1, 4, 4, 4), "Filter": r(4, 2, 3, 3)},
        {"groups": 2, "paddings": [1, 1]},
        ref=conv_ref,
        grad=G,
        name="groups",
    ),
    OpCase(
        "conv2d",
        {"Input": r(1, 2, 5, 5), "Filter": r(2, 2, 3, 3)},
        {"strides": [2, 2], "padding_algorithm": "SAME"},
        ref=conv_ref,
        grad=G,
        name="same",
    ),
    OpCase(
        "conv2d",
        {"Input": r(1, 2, 5, 5), "Filter": r(2, 2, 3, 3)},
        {"paddings": [3, 3], "padding_algorithm": "VALID"},
        ref=conv_ref,
        name="valid",
    ),
    OpCase(
        "conv2d",
        {"Input": r(1, 4, 4, 2), "Filter": r(3, 2, 2, 2)},
        {"data_format": "NHWC"},
        ref=conv_ref,
        grad=G,
        name="nhwc",
    ),
    # padding wider than the dilated kernel: the stride-1 input gradient falls back to col2im
    OpCase(
        "conv2d",
        {"Input": r(1, 2, 3, 3), "Filter": r(2, 2, 1, 2)},
        {"paddings": [1, 2]},
        ref=conv_ref,
        grad=G,
        name="pad_beyond_kernel",
    ),
    OpCase(
        "conv2d",
        {"Input": r(1, 4, 5, 5), "Filter": r(4, 2, 3, 3)},
        {"groups": 2, "strides": [2, 2], "dilations": [1, 2], "paddings": [1, 1]},
        ref=conv_ref,
        grad=G,
        name="groups_stride_dilation",
    ),
    OpCase(
        "depthwise_conv2d",
        {"Input": r(1, 3, 4, 4), "Filter": r(6, 1, 3, 3)},
        {"groups": 3, "paddings": [1, 1]},
        ref=conv_ref,
        grad=G,
        name="depthwise",
    ),
    OpCase(
        "conv2d_transpose",
        {"Input": r(1, 2, 3, 3), "Filter": r(2, 3, 3, 3)},
        ref=conv_t_ref,
        grad=G,
        name="basic",
    ),
    OpCase(
        "conv2d_transpose",
        {"Input": r(1, 2, 3, 2), "Filter": r(2, 2, 3, 2)},
        {"strides": [2, 2], "paddings": [1, 0], "dilations": [1, 2]},
        ref=conv_t_ref,
        grad=G,
        name="stride_pad_dil",
    ),
    OpCase(
        "conv2d_transpose",
        {"Input": r(1, 4, 2, 2), "Filter": r(4, 1, 3, 3)},
        {"strides": [2, 2], "groups": 2, "output_size": [6, 5]},
        ref=conv_t_ref,
        grad=G,
        name="groups_output_size",
    ),
    OpCase(
        "depthwise_conv2d_transpose",
        {"Input": r(1, 3, 3, 3), "Filter": r(3, 1, 3, 3)},
        {"strides": [2, 2], "groups": 3, "paddings": [1, 1]},
        ref=conv_t_ref,
        grad=G,
        name="depthwise",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_conv(case):
    check_case(case)


def test_float32_stays_float32():
    from oar.testing import run_forward

    case = OpCase(
        "conv2d",
        {"Input": r(2, 3, 6, 6).astype("float32"), "Filter": r(4, 3, 3, 3).astype("float32")},
    )
    out = run_forward(case)["Output"][0]
    assert out.dtype == np.float32
    np.testing.assert_allclose(
        out, conv_ref(case.inputs["Input"], case.inputs["Filter"])["Output"], rtol=1e-4, atol=1e-5
    )
