"""deformable_conv (v2 with mask, v1 without) against a loop-by-loop numpy reference, with
numeric gradients for Input, Offset, Mask and Filter.

Fluid 1.8.5's CPU kernel returns zeros (its deformable convolution computes only on GPU),
so there is no golden data from it; the reference below follows the DCN papers' definition.
"""

import numpy as np
import pytest
from oar import fluid
from oar.errors import OarError
from oar.testing import OpCase, check_case


def _bilinear(img, y, x):
    h, w = img.shape
    if not (-1 < y < h and -1 < x < w):
        return 0.0
    y0, x0 = int(np.floor(y)), int(np.floor(x))
    total = 0.0
    for yy, wy in ((y0, 1 - (y - y0)), (y0 + 1, y - y0)):
        for xx, wx in ((x0, 1 - (x - x0)), (x0 + 1, x - x0)):
            if 0 <= yy < h and 0 <= xx < w:
                total += img[yy, xx] * wy * wx
    return total


def _ref(Input, Offset, Filter, Mask=None, strides=(1, 1), paddings=(0, 0), dilations=(1, 1), groups=1,
         deformable_groups=1, **_):  # fmt: skip
    n, c, h, w = Input.shape
    f, cg, kh, kw = Filter.shape
    ho, wo = Offset.shape[2:]
    out = np.zeros((n, f, ho, wo))
    cpd = c // deformable_groups
    for b in range(n):
        for o in range(f):
            grp = o // (f // groups)
            for i in range(ho):
                for j in range(wo):
                    acc = 0.0
                    for ci in range(cg):
                        ch = grp * cg + ci
                        dgi = ch // cpd
                        for a in range(kh):
                            for e in range(kw):
                                k = a * kw + e
                                y = (
                                    i * strides[0]
                                    - paddings[0]
                                    + a * dilations[0]
                                    + Offset[b, dgi * 2 * kh * kw + 2 * k, i, j]
                                )
                                x = (
                                    j * strides[1]
                                    - paddings[1]
                                    + e * dilations[1]
                                    + Offset[b, dgi * 2 * kh * kw + 2 * k + 1, i, j]
                                )
                                v = _bilinear(Input[b, ch], y, x)
                                if Mask is not None:
                                    v *= Mask[b, dgi * kh * kw + k, i, j]
                                acc += Filter[o, ci, a, e] * v
                    out[b, o, i, j] = acc
    return {"Output": out}


RNG = np.random.RandomState(12)
ATTRS = {
    "strides": [2, 1],
    "paddings": [1, 1],
    "dilations": [1, 1],
    "groups": 2,
    "deformable_groups": 2,
}
CASES = [
    OpCase(
        "deformable_conv",
        {
            "Input": RNG.rand(1, 4, 4, 3),
            "Offset": RNG.randn(1, 2 * 2 * 4, 3, 4) * 0.7 + 0.13,
            "Mask": RNG.rand(1, 2 * 4, 3, 4),
            "Filter": RNG.rand(2, 2, 2, 2) - 0.5,
        },
        ATTRS,
        ref=_ref,
        grad=["Input", "Offset", "Mask", "Filter"],
        grad_rtol=1e-3,
        grad_atol=1e-5,
    ),
    OpCase(
        "deformable_conv_v1",
        {
            "Input": RNG.rand(2, 2, 3, 3),
            "Offset": RNG.randn(2, 2 * 4, 4, 1) * 0.6 + 0.21,
            "Filter": RNG.rand(3, 2, 2, 2) - 0.5,
        },
        {"paddings": [1, 0], "dilations": [1, 2]},
        ref=_ref,
        grad=["Input", "Offset", "Filter"],
        grad_rtol=1e-3,
        grad_atol=1e-5,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_deformable_conv(case):
    check_case(case)


def _build(fn):
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        return fn(fluid.layers)


def _x():
    return fluid.data("x", [1, 4, 6, 6], "float32")


BAD = [
    (lambda L: L.deformable_conv(_x(), fluid.data("o", [1, 18, 6, 6]), None, 8, 3, padding=1), "mask"),
    (lambda L: L.deformable_conv(_x(), fluid.data("o", [1, 16, 6, 6]), fluid.data("m", [1, 9, 6, 6]), 8, 3, padding=1), "Offset must be"),
    (lambda L: L.deformable_conv(_x(), fluid.data("o", [1, 18, 6, 6]), fluid.data("m", [1, 9, 6, 6]), 8, 3, padding=1, groups=3), "groups"),
]  # fmt: skip


@pytest.mark.parametrize("fn,match", BAD)
def test_bad_input_names_layer_and_line(fn, match):
    with pytest.raises(OarError, match=match) as info:
        _build(fn)
    assert "deformable_conv" in str(info.value) and "test_deformable_conv.py" in str(info.value)
