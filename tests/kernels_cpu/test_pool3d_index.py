"""max_pool3d_with_index (adaptive_pool3d(require_index=True)): Fluid 1.8.5 golden data,
PyTorch's indices and numeric gradients."""

from pathlib import Path

import numpy as np
import pytest
from oar import fluid
from oar.testing import OpCase, check_case

torch = pytest.importorskip("torch")
F = torch.nn.functional
rng = np.random.default_rng(43)
GOLDEN = np.load(Path(__file__).parent / "data" / "fluid18_pool3d_index.npz")


def _distinct(*shape):
    n = int(np.prod(shape))
    return rng.permutation(n).reshape(shape) / n * 2 - 1


def _ref(X, ksize, strides, paddings, adaptive, **_):
    t = torch.tensor(X)
    if adaptive:
        out, idx = F.adaptive_max_pool3d(t, ksize, return_indices=True)
    else:
        out, idx = F.max_pool3d(t, ksize, strides, paddings, return_indices=True)
    return {"Out": out.numpy(), "Mask": idx.numpy().astype("int32")}


X = _distinct(2, 2, 4, 5, 4)
_BASE = {"global_pooling": False, "strides": [1, 1, 1], "paddings": [0, 0, 0]}
CASES = [
    OpCase(
        "max_pool3d_with_index",
        {"X": X},
        dict(_BASE, ksize=[3, 2, 3], adaptive=True),
        ref=_ref,
        grad=["X"],
        grad_outputs=["Out"],
        name="adaptive",
    ),
    OpCase(
        "max_pool3d_with_index",
        {"X": X},
        dict(_BASE, ksize=[2, 3, 2], strides=[2, 2, 1], paddings=[1, 1, 0], adaptive=False),
        ref=_ref,
        grad=["X"],
        grad_outputs=["Out"],
        name="padded",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_max_pool3d_with_index(case):
    check_case(case)


@pytest.mark.parametrize("tag", ["uneven", "even"])
def test_adaptive_pool3d_require_index_matches_fluid18(tag):
    g = {k: GOLDEN[f"{tag}_{k}"] for k in ("x", "w", "out", "mask", "dx")}
    size = list(g["out"].shape[2:])
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        xv = fluid.data("x", list(g["x"].shape), "float32")
        xv.stop_gradient = False
        y, mask = fluid.layers.adaptive_pool3d(xv, size, require_index=True)
        assert mask.dtype == "int32" and list(mask.shape) == list(g["mask"].shape)
        loss = fluid.layers.reduce_sum(y * fluid.layers.assign(g["w"]))
        (dx,) = fluid.gradients([loss], [xv])
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    out, m, gx = exe.run(main, feed={"x": g["x"]}, fetch_list=[y, mask, dx])
    np.testing.assert_array_equal(out, g["out"])
    np.testing.assert_array_equal(m, g["mask"])
    np.testing.assert_allclose(gx, g["dx"], rtol=1e-6, atol=1e-7)


def test_dygraph_returns_values_and_indices():
    x = GOLDEN["even_x"]
    with fluid.dygraph.guard():
        y, mask = fluid.layers.adaptive_pool3d(fluid.dygraph.to_variable(x), [2, 2, 3], "max", True)
        np.testing.assert_array_equal(mask.numpy(), GOLDEN["even_mask"])
        np.testing.assert_array_equal(y.numpy(), GOLDEN["even_out"])
