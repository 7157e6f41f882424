"""center_loss: reference, gradient and two steps of Fluid 1.8.5 (centres updated in place)."""

from pathlib import Path

import numpy as np
import pytest
from oar import fluid
from oar.errors import OarError
from oar.testing import OpCase, check_case

G = np.load(Path(__file__).parent / "data" / "fluid18_center_loss.npz")
rng = np.random.default_rng(131)
X = rng.uniform(-1, 1, (4, 3))
LAB = np.array([[0], [2], [0], [1]], "int64")
C = rng.uniform(-1, 1, (3, 3))

CASES = [
    OpCase(
        "center_loss",
        {"X": X, "Label": LAB, "Centers": C, "CenterUpdateRate": np.array([0.1])},
        {"cluster_num": 3, "need_update": False},
        ref=lambda X, Label, Centers, **_: {
            "Loss": 0.5 * ((X - Centers[Label.ravel()]) ** 2).sum(1, keepdims=True)
        },
        grad=["X"],
        grad_outputs=["Loss"],
    )
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_center_loss(case):
    check_case(case)


def test_two_steps_match_fluid18():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data("x", [None, 3], "float32")
        x.stop_gradient = False
        lab = fluid.data("l", [None, 1], "int64")
        init = fluid.initializer.NumpyArrayInitializer(G["c0"])
        loss = fluid.layers.center_loss(
            x, lab, 3, 0.1, fluid.ParamAttr("c", initializer=init), True
        )
        (g,) = fluid.gradients([fluid.layers.reduce_sum(loss)], [x])
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    for _ in range(2):
        got_loss, got_g = exe.run(
            main, feed={"x": G["x"], "l": G["label"]}, fetch_list=[loss, g], scope=scope
        )
    np.testing.assert_allclose(got_loss, G["loss2"], rtol=1e-5)
    np.testing.assert_allclose(got_g, G["gx2"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.array(scope.find_var("c").get_tensor()), G["c_final"], rtol=1e-5)


def test_bad_input_is_refused():
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        x = fluid.data("x", [None, 3], "float32")
        lab = fluid.data("l", [None, 1], "int64")
        with pytest.raises(OarError, match="num_classes"):
            fluid.layers.center_loss(x, lab, 0, 0.1, None)
