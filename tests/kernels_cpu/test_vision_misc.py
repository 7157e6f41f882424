"""space_to_depth, temporal_shift, unfold, fsp, crop, bilinear_tensor_product: references,
numeric gradients, PyTorch and Fluid 1.8.5's element orders."""

import numpy as np
import pytest
from oar import fluid
from oar.errors import OarError
from oar.testing import OpCase, check_case

torch = pytest.importorskip("torch")
rng = np.random.default_rng(91)


def r(*shape):
    return rng.uniform(-1, 1, shape)


def _reorg(x, b):
    """Fluid's space_to_depth as its loops run (Darknet reorg, forward), element by element."""
    n, c, h, w = x.shape
    flat, out = x.reshape(-1), np.zeros(x.size, x.dtype)
    oc = c // (b * b)
    for bb in range(n):
        for k in range(c):
            for j in range(h):
                for i in range(w):
                    c2, off = k % oc, k // oc
                    w2, h2 = i * b + off % b, j * b + off // b
                    out[w2 + w * b * (h2 + h * b * (c2 + oc * bb))] = flat[
                        i + w * (j + h * (k + c * bb))
                    ]
    return out.reshape(n, c * b * b, h // b, w // b)


def _unfold_ref(X, kernel_sizes, strides, paddings, dilations):
    t = torch.nn.functional.pad(
        torch.tensor(X), (paddings[1], paddings[3], paddings[0], paddings[2])
    )
    return {
        "Y": torch.nn.functional.unfold(t, kernel_sizes, dilation=dilations, stride=strides).numpy()
    }


XS = r(2, 8, 4, 6)
CASES = [
    OpCase(
        "space_to_depth",
        {"X": XS},
        {"blocksize": 2},
        ref=lambda X, blocksize: {"Out": _reorg(X, blocksize)},
        grad=["X"],
    ),
    OpCase(
        "temporal_shift",
        {"X": r(6, 8, 2, 2)},
        {"seg_num": 3, "shift_ratio": 0.25},
        grad=["X"],
    ),
    OpCase(
        "unfold",
        {"X": r(2, 2, 4, 5)},
        {"kernel_sizes": [2, 3], "strides": [1, 2], "paddings": [1, 0, 0, 1], "dilations": [1, 1]},
        ref=_unfold_ref,
        grad=["X"],
    ),
    OpCase(
        "fsp",
        {"X": r(2, 3, 2, 2), "Y": r(2, 4, 2, 2)},
        ref=lambda X, Y: {"Out": np.einsum("nihw,njhw->nij", X, Y) / 4},
        grad=["X", "Y"],
    ),
    OpCase(
        "crop",
        {"X": r(3, 5)},
        {"offsets": [1, 2], "shape": [2, 2]},
        ref=lambda X, **_: {"Out": X[1:3, 2:4]},
        grad=["X"],
    ),
    OpCase(
        "bilinear_tensor_product",
        {"X": r(3, 2), "Y": r(3, 4), "Weight": r(5, 2, 4), "Bias": r(1, 5)},
        ref=lambda X, Y, Weight, Bias: {"Out": np.einsum("ni,kij,nj->nk", X, Weight, Y) + Bias},
        grad=["X", "Y", "Weight", "Bias"],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_vision_misc(case):
    check_case(case)


def test_fluid18_orders():
    v = fluid.dygraph.to_variable
    with fluid.dygraph.guard():
        x = np.arange(64, dtype="float32").reshape(1, 4, 4, 4)
        s = fluid.layers.space_to_depth(v(x), 2).numpy()[0].reshape(16, 4)
        # Fluid 1.8.5's first output channels for the same input
        assert s[:3].astype(int).tolist() == [[0, 16, 1, 17], [2, 18, 3, 19], [32, 48, 33, 49]]
        t = np.arange(48, dtype="float32").reshape(6, 8, 1, 1)
        ts = fluid.layers.temporal_shift(v(t), 3, 0.25).numpy().reshape(6, 8)
        assert ts[:3].tolist() == [
            [0, 0, 10, 11, 4, 5, 6, 7],
            [0, 1, 18, 19, 12, 13, 14, 15],
            [8, 9, 0, 0, 20, 21, 22, 23],
        ]
        u = fluid.layers.unfold(
            v(np.arange(12, dtype="float32").reshape(1, 1, 3, 4)), [2, 2], paddings=[1, 0, 0, 0]
        )
        assert u.shape == [1, 4, 9]
        assert u.numpy()[0, 0].tolist() == [0, 0, 0, 0, 1, 2, 4, 5, 6]


def test_bilinear_tensor_product_layer_against_torch():
    x, y = r(4, 3).astype("float32"), r(4, 5).astype("float32")
    with fluid.dygraph.guard():
        out = fluid.layers.bilinear_tensor_product(
            fluid.dygraph.to_variable(x), fluid.dygraph.to_variable(y), 6
        )
    assert out.shape == [4, 6]
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        a, b = fluid.data("a", [None, 3], "float32"), fluid.data("b", [None, 5], "float32")
        o = fluid.layers.bilinear_tensor_product(a, b, 6, act="tanh")
        w = [p for p in main.all_parameters() if len(p.shape) == 3][0]
    assert tuple(w.shape) == (6, 3, 5) and o.shape == (-1, 6)
    wt = r(6, 3, 5)
    want = torch.nn.functional.bilinear(
        torch.tensor(x, dtype=torch.float64), torch.tensor(y, dtype=torch.float64), torch.tensor(wt)
    )
    np.testing.assert_allclose(np.einsum("ni,kij,nj->nk", x, wt, y), want.numpy(), rtol=1e-5)


@pytest.mark.parametrize(
    "build, match",
    [
        (lambda L, x: L.space_to_depth(x, 3), "divisible"),
        (lambda L, x: L.temporal_shift(x, 4), "divisible by seg_num"),
        (lambda L, x: L.temporal_shift(x, 2, 0.7), "shift_ratio"),
        (lambda L, x: L.unfold(x, [9, 9]), "does not fit"),
        (lambda L, x: L.crop(x, [2, 2]), "as many dims"),
        (lambda L, x: L.crop(x, [2, 8, 4, 4], [0, 0, 1, 0]), "exceeds"),
        (lambda L, x: L.bilinear_tensor_product(x, x, 3), "2-D"),
    ],
)
def test_bad_input_is_refused(build, match):
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        x = fluid.data("x", [2, 8, 4, 4], "float32")
        with pytest.raises(OarError, match=match):
            build(fluid.layers, x)
