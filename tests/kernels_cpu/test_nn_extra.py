"""cvm, random_crop, spectral_norm (+ inplace_abn layer): references, gradients, Fluid 1.8.5."""

import numpy as np
import pytest
from oar import fluid
from oar.errors import OarError
from oar.testing import OpCase, check_case, run_forward

rng = np.random.default_rng(111)
CX = np.array([[1.0, 2.0, 3.0, 4.0], [0.5, 0.25, 5.0, 6.0]])
CV = np.array([[1.0, 2.0], [3.0, 4.0]])


def _sn_ref(Weight, U, V, dim, **_):
    mat = np.moveaxis(Weight, dim, 0).reshape(Weight.shape[dim], -1)
    return {"Out": Weight / (U @ mat @ V)}


W = rng.uniform(-1, 1, (3, 2, 2))
CASES = [
    OpCase("cvm", {"X": CX, "CVM": CV}, {"use_cvm": True}),
    # Fluid's cvm "gradient" hands the CVM values to the show/click columns: with CVM = 0 and
    # those columns dropped it is the true gradient, which the numeric check can confirm
    OpCase(
        "cvm",
        {"X": CX, "CVM": np.zeros((2, 2))},
        {"use_cvm": False},
        ref=lambda X, **_: {"Y": X[:, 2:]},
        grad=["X"],
        name="drop",
    ),
    OpCase(
        "spectral_norm",
        {"Weight": W, "U": rng.uniform(-1, 1, 2), "V": rng.uniform(-1, 1, 6)},
        {"dim": 1, "power_iters": 0, "eps": 1e-12},
        ref=_sn_ref,
        grad=["Weight"],
    ),
    OpCase(
        "random_crop",
        {"X": rng.uniform(-1, 1, (2, 3, 4, 4))},
        {"shape": [3, 2, 2], "startup_seed": 5},
    ),
]


@pytest.mark.parametrize("case", CASES[:3], ids=str)
def test_nn_extra(case):
    check_case(case)


def test_cvm_matches_fluid18_and_grad_copies_cvm():
    with fluid.dygraph.guard():
        v = fluid.dygraph.to_variable
        x = v(CX.astype("float32"))
        y = fluid.layers.continuous_value_model(x, v(CV.astype("float32")), True)
        # Fluid 1.8.5's output for the same call
        np.testing.assert_allclose(
            y.numpy(), [[0.693147, 0.405465, 3, 4], [0.405465, -0.182322, 5, 6]], rtol=1e-5
        )
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        x = fluid.data("x", [2, 4], "float32")
        x.stop_gradient = False
        c = fluid.data("c", [2, 2], "float32")
        y = fluid.layers.continuous_value_model(x, c, True)
        (g,) = fluid.gradients([fluid.layers.reduce_sum(y)], [x])
    (gx,) = fluid.Executor(fluid.CPUPlace()).run(
        main,
        feed={"x": CX.astype("float32"), "c": CV.astype("float32")},
        fetch_list=[g],
        scope=fluid.Scope(),
    )
    np.testing.assert_allclose(gx, [[1, 2, 1, 1], [3, 4, 1, 1]])


def test_random_crop_boxes_come_from_the_input():
    x = np.arange(2 * 3 * 5 * 6, dtype="float64").reshape(2, 3, 5, 6)
    case = OpCase("random_crop", {"X": x}, {"shape": [3, 2, 4], "startup_seed": 7})
    out = run_forward(case)["Out"][0]
    assert out.shape == (2, 3, 2, 4)
    for i in range(2):
        r0, c0 = divmod(int(out[i, 0, 0, 0]) - i * 90, 6)
        np.testing.assert_array_equal(out[i], x[i, :, r0 : r0 + 2, c0 : c0 + 4])
    np.testing.assert_array_equal(out, run_forward(case)["Out"][0])  # seeded


def test_spectral_norm_layer_converges_to_the_largest_singular_value():
    w = rng.uniform(0, 1, (3, 4)).astype("float32")
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        wv = fluid.data("w", [3, 4], "float32")
        out = fluid.layers.spectral_norm(wv, dim=0, power_iters=20)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    (got,) = exe.run(main, feed={"w": w}, fetch_list=[out], scope=scope)
    np.testing.assert_allclose(got, w / np.linalg.svd(w, compute_uv=False)[0], rtol=1e-4)


def test_inplace_abn_is_batch_norm_then_activation():
    x = rng.uniform(-1, 1, (4, 3, 2, 2)).astype("float32")
    with fluid.dygraph.guard():
        y = fluid.layers.inplace_abn(
            fluid.dygraph.to_variable(x), act="leaky_relu", act_alpha=0.1
        ).numpy()
    mean, var = x.mean((0, 2, 3), keepdims=True), x.var((0, 2, 3), keepdims=True)
    z = (x - mean) / np.sqrt(var + 1e-5)
    np.testing.assert_allclose(y, np.where(z > 0, z, 0.1 * z), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(
    "build, match",
    [
        (lambda L, x: L.random_crop(x, [5, 5]), "must be in"),
        (lambda L, x: L.random_crop(x, []), "positive ints"),
        (lambda L, x: L.spectral_norm(x, dim=4), "dim"),
        (lambda L, x: L.inplace_abn(x, act="relu"), "act"),
    ],
)
def test_bad_input_is_refused(build, match):
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        x = fluid.data("x", [2, 3, 4, 4], "float32")
        with pytest.raises(OarError, match=match):
            build(fluid.layers, x)
