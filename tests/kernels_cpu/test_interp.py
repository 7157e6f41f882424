"""bilinear_interp / nearest_interp: forward vs a per-pixel reference (checked against Fluid 1.8), gradients."""

import numpy as np
import pytest
from oar.testing import OpCase, check_case

rng = np.random.default_rng(0)


def r(*shape):
    return rng.uniform(-1.0, 1.0, shape).astype("float64")


def _ratio(size, out, ac):
    return 0.0 if out <= 1 else ((size - 1) / (out - 1) if ac else size / out)


def interp_ref(
    X,
    out_h=-1,
    out_w=-1,
    scale=0.0,
    interp_method="bilinear",
    align_corners=True,
    align_mode=1,
    data_layout="NCHW",
    **_,
):
    """Per output pixel, Fluid's index rules written out plainly."""
    x = X.transpose(0, 3, 1, 2) if data_layout == "NHWC" else X
    h, w = x.shape[2:]
    if scale > 0:
        out_h, out_w = int(h * scale), int(w * scale)
    rh, rw = _ratio(h, out_h, align_corners), _ratio(w, out_w, align_corners)
    out = np.zeros(x.shape[:2] + (out_h, out_w))
    half = align_mode == 0 and not align_corners
    for i in range(out_h):
        for j in range(out_w):
            if interp_method == "nearest":
                yi = int(rh * i + 0.5) if align_corners else int(rh * i)
                xj = int(rw * j + 0.5) if align_corners else int(rw * j)
                out[:, :, i, j] = x[:, :, min(yi, h - 1), min(xj, w - 1)]
                continue
            sy = max(rh * (i + 0.5) - 0.5, 0) if half else rh * i
            sx = max(rw * (j + 0.5) - 0.5, 0) if half else rw * j
            y0, x0 = min(int(sy), h - 1), min(int(sx), w - 1)
            y1, x1 = min(y0 + 1, h - 1), min(x0 + 1, w - 1)
            dy, dx = sy - y0, sx - x0
            out[:, :, i, j] = (
                x[:, :, y0, x0] * (1 - dy) * (1 - dx)
                + x[:, :, y0, x1] * (1 - dy) * dx
                + x[:, :, y1, x0] * dy * (1 - dx)
                + x[:, :, y1, x1] * dy * dx
            )
    if data_layout == "NHWC":
        out = out.transpose(0, 2, 3, 1)
    return {"Out": out}


def _c(op, shape, name, **attrs):
    attrs["interp_method"] = op.split("_")[0]
    return OpCase(op, {"X": r(*shape)}, attrs, ref=interp_ref, grad=["X"], name=name)


CASES = [
    _c("bilinear_interp", (1, 2, 3, 4), "align_corners", out_h=5, out_w=3),
    _c("bilinear_interp", (1, 2, 3, 4), "align_mode1", out_h=5, out_w=7, align_corners=False),
    _c(
        "bilinear_interp",
        (1, 2, 4, 3),
        "half_pixel",
        out_h=2,
        out_w=5,
        align_corners=False,
        align_mode=0,
    ),
    _c("bilinear_interp", (1, 2, 3, 3), "scale", scale=1.5),
    _c("bilinear_interp", (1, 3, 3, 2), "nhwc", out_h=4, out_w=4, data_layout="NHWC"),
    _c("nearest_interp", (1, 2, 3, 4), "align_corners", out_h=5, out_w=3),
    _c("nearest_interp", (1, 2, 3, 4), "no_align", out_h=6, out_w=2, align_corners=False),
    _c("nearest_interp", (1, 2, 4, 4), "scale", scale=0.5, align_corners=False),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_interp(case):
    check_case(case)
