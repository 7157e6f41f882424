"""Max pooling windows whose inputs are all -inf, against Fluid 1.8.5 golden data
(data/fluid18_pool_neg_inf.py): the output is -FLT_MAX, the index -1, and the window takes no
gradient (Fluid routes it to the first input equal to the floored output: there is none;
its adaptive pooling writes it at index -1 instead, see ``_want_dx``)."""

from pathlib import Path

import numpy as np
import pytest
from oar import fluid
from oar_kernels_cpu.kernels import pool, pool3d

GOLDEN = np.load(Path(__file__).parent / "data" / "fluid18_pool_neg_inf.npz")
LOWEST = np.finfo(np.float32).min


def _attrs(nd, adaptive, size):
    return {
        "ksize": [size] * nd,
        "strides": [2] * nd,
        "paddings": [0] * nd,
        "pooling_type": "max",
        "exclusive": True,
        "ceil_mode": False,
        "global_pooling": False,
        "adaptive": adaptive,
        "padding_algorithm": "EXPLICIT",
        "data_format": "NCHW" if nd == 2 else "NCDHW",
    }


def _dy(y):
    return np.arange(1, y.size + 1, dtype=y.dtype).reshape(y.shape)


# name: (dims, adaptive); every case pools to 2 per axis (kernel 2, stride 2 when regular)
CASES = {"a2": (2, True), "p2": (2, False), "p3": (3, False), "a3": (3, True)}


def _want_dx(name):
    """Fluid's gradient without its stray writes (a deliberate difference): Fluid 1.8.5's
    adaptive max pooling gives a window of -inf the index -1 and adds its gradient there, at
    the last input of the previous channel (before the array for the first one); oar drops it."""
    nd, adaptive = CASES[name]
    want = GOLDEN[f"{name}_dx"].copy()
    if adaptive:
        x, y = GOLDEN[f"x{nd}"], GOLDEN[f"{name}_out"]
        dy = _dy(y)
        n, c = x.shape[:2]
        for i in range(n):
            for ch in range(1, c):
                stray = dy[i, ch][y[i, ch] == LOWEST].sum()
                want[i, ch - 1].reshape(-1)[-1] -= stray
    return want


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_numpy_kernels_match_fluid(name, dtype):
    nd, adaptive = CASES[name]
    x = GOLDEN[f"x{nd}"].astype(dtype)
    fwd, bwd = (pool.pool2d, pool.pool2d_grad) if nd == 2 else (pool3d.pool3d, pool3d.pool3d_grad)
    attrs = _attrs(nd, adaptive, 2)
    y = fwd({"X": x}, attrs)["Out"]
    dx = bwd({"X": x, "Out": y, "Out@GRAD": _dy(y)}, attrs)["X@GRAD"]
    assert (GOLDEN[f"{name}_out"] == LOWEST).any()  # the data has windows of -inf
    np.testing.assert_array_equal(y, GOLDEN[f"{name}_out"])
    np.testing.assert_array_equal(dx, _want_dx(name))


@pytest.mark.parametrize("nd", [2, 3])
def test_adaptive_with_index_gives_index_minus_one(nd):
    x = GOLDEN[f"x{nd}"]
    attrs = _attrs(nd, True, 2)
    del attrs["ceil_mode"], attrs["pooling_type"], attrs["exclusive"]
    fwd = pool.max_pool2d_with_index if nd == 2 else pool3d.max_pool3d_with_index
    got = fwd({"X": x}, attrs)
    np.testing.assert_array_equal(got["Out"], GOLDEN[f"i{nd}_out"])
    np.testing.assert_array_equal(got["Mask"], GOLDEN[f"i{nd}_mask"])


@pytest.mark.parametrize("name", sorted(CASES))
def test_layers_and_registered_kernels_match_fluid(name):
    """Through the layers and whichever kernel the registry picks (the numba plugin's too)."""
    nd, adaptive = CASES[name]
    xv = GOLDEN[f"x{nd}"]
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data("x", list(xv.shape), "float32")
        x.stop_gradient = False
        if adaptive:
            fn = fluid.layers.adaptive_pool2d if nd == 2 else fluid.layers.adaptive_pool3d
            y = fn(x, 2, "max")
        else:
            y = (fluid.layers.pool2d if nd == 2 else fluid.layers.pool3d)(x, 2, "max", 2)
        dy = fluid.layers.assign(_dy(GOLDEN[f"{name}_out"]))
        (grad,) = fluid.gradients([y], [x], target_gradients=[dy])  # y * dy would overflow
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    out, dx = exe.run(main, feed={"x": xv}, fetch_list=[y, grad])
    np.testing.assert_array_equal(out, GOLDEN[f"{name}_out"])
    np.testing.assert_array_equal(dx, _want_dx(name))
