"""trilinear_interp (resize_trilinear / interpolate) and image_resize_short: numeric gradients,
PyTorch and Fluid 1.8.5's numbers."""

import numpy as np
import pytest
from oar import fluid
from oar.errors import OarError
from oar.testing import OpCase, check_case

torch = pytest.importorskip("torch")
F = torch.nn.functional
rng = np.random.default_rng(61)


def _attrs(**kw):
    a = {
        "out_d": 3,
        "out_h": 5,
        "out_w": 2,
        "scale": 0.0,
        "interp_method": "trilinear",
        "align_corners": True,
        "align_mode": 1,
        "data_layout": "NCDHW",
    }
    a.update(kw)
    return a


def _torch_ref(X, out_d, out_h, out_w, align_corners, **_):
    y = F.interpolate(
        torch.tensor(X), size=(out_d, out_h, out_w), mode="trilinear", align_corners=align_corners
    )
    return {"Out": y.numpy()}


X = rng.uniform(-1, 1, (1, 2, 2, 3, 4))
CASES = [
    OpCase("trilinear_interp", {"X": X}, _attrs(), ref=_torch_ref, grad=["X"]),
    OpCase(
        "trilinear_interp",
        {"X": X},
        _attrs(align_corners=False, align_mode=0),
        ref=_torch_ref,
        grad=["X"],
        name="half_pixel",
    ),
    OpCase(
        "trilinear_interp",
        {"X": X},
        _attrs(out_d=-1, out_h=-1, out_w=-1, scale=2.0, align_corners=False, align_mode=0),
        ref=lambda X, **_: {
            "Out": F.interpolate(torch.tensor(X), scale_factor=2, mode="trilinear").numpy()
        },
        grad=["X"],
        name="scale",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_interp3d(case):
    check_case(case)


def test_fluid18_align_mode_1_and_layers():
    x = np.arange(2 * 3 * 4 * 2, dtype="float32").reshape(1, 2, 3, 4, 2) ** 1.5
    # Fluid 1.8.5: resize_trilinear(x, [2, 3, 3], align_corners=False, align_mode=1), first 9 values
    want = [0.0, 0.66667, 1.0, 4.55229, 6.31135, 7.19088, 12.46463, 14.87062, 16.07362]
    with fluid.dygraph.guard():
        v = fluid.dygraph.to_variable(x)
        y = fluid.layers.resize_trilinear(v, out_shape=[2, 3, 3], align_corners=False, align_mode=1)
        np.testing.assert_allclose(y.numpy().reshape(-1)[:9], want, rtol=1e-5, atol=1e-5)
        assert y.numpy().reshape(-1)[-1] == pytest.approx(276.41214, rel=1e-5)
        z = fluid.layers.interpolate(
            v, out_shape=[4, 4, 4], resample="TRILINEAR", data_format="NCDHW"
        )
        assert list(z.shape) == [1, 2, 4, 4, 4]
        img = fluid.dygraph.to_variable(np.zeros((1, 1, 5, 8), "float32"))
        assert list(fluid.layers.image_resize_short(img, 3).shape) == [1, 1, 3, 5]  # as Fluid 1.8.5
        assert list(fluid.layers.interpolate(img, scale=2.0).shape) == [1, 1, 10, 16]


@pytest.mark.parametrize(
    "build, match",
    [
        (lambda L, x: L.interpolate(x, out_shape=[4, 4, 4], resample="TRILINEAR"), "NCDHW"),
        (lambda L, x: L.resize_trilinear(x, out_shape=[4, 4]), r"\[d, h, w\]"),
        (lambda L, x: L.resize_trilinear(x), "out_shape and scale"),
        (lambda L, x: L.interpolate(x, scale=2, resample="CUBIC"), "resample"),
        (lambda L, x: L.image_resize_short(x, 3), "4-D"),
    ],
)
def test_bad_input_is_refused(build, match):
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        x = fluid.data("x", [1, 2, 3, 4, 4], "float32")
        with pytest.raises(OarError, match=match):
            build(fluid.layers, x)
