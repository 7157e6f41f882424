"""cross_entropy: hard labels, soft labels, ignore_index."""

import numpy as np
import pytest
from oar.testing import OpCase, check_case

rng = np.random.default_rng(7)


def probs(*shape):
    p = rng.uniform(0.2, 1.0, shape)
    return p / p.sum(axis=-1, keepdims=True)


def _ref(X, Label, soft_label=False, ignore_index=-100):
    if soft_label:
        return {"Y": -(Label * np.log(X)).sum(-1, keepdims=True)}
    lab = Label.reshape(-1)
    x2 = X.reshape(-1, X.shape[-1])
    y = np.array([0.0 if c == ignore_index else -np.log(x2[i, c]) for i, c in enumerate(lab)])
    return {"Y": y.reshape(X.shape[:-1] + (1,)).astype(X.dtype)}


CASES = [
    OpCase(
        "cross_entropy",
        {"X": probs(4, 3), "Label": np.array([[0], [2], [1], [2]], "int64")},
        ref=_ref,
        grad=["X"],
        name="hard",
    ),
    OpCase(
        "cross_entropy",
        {"X": probs(2, 2, 3), "Label": np.array([[[0], [2]], [[1], [1]]], "int64")},
        ref=_ref,
        grad=["X"],
        name="hard-3d",
    ),
    OpCase(
        "cross_entropy",
        {"X": probs(3, 4), "Label": probs(3, 4)},
        {"soft_label": True},
        ref=_ref,
        grad=["X"],
        name="soft",
    ),
    OpCase(
        "cross_entropy",
        {"X": probs(4, 3), "Label": np.array([[0], [-1], [1], [-1]], "int64")},
        {"ignore_index": -1},
        ref=_ref,
        grad=["X"],
        name="ignore-index",
    ),
    OpCase(
        "cross_entropy",
        {"X": probs(3, 5).astype("float32"), "Label": np.array([[4], [0], [3]], "int64")},
        ref=_ref,
        rtol=1e-5,
        name="float32",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_loss(case):
    check_case(case)


def test_ignored_rows_have_zero_gradient():
    from oar import fluid

    x_val = probs(3, 3)
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        x = fluid.layers.data("x", shape=[3], dtype="float64")
        x.stop_gradient = False
        label = fluid.layers.data("label", shape=[1], dtype="int64")
        loss = fluid.layers.cross_entropy(x, label, ignore_index=7)
        (gx,) = fluid.gradients([fluid.layers.mean(loss)], [x])
        main = fluid.default_main_program()
    exe = fluid.Executor(fluid.CPUPlace())
    (g,) = exe.run(
        main,
        feed={"x": x_val, "label": np.array([[1], [7], [0]], "int64")},
        fetch_list=[gx],
        scope=fluid.Scope(),
    )
    assert np.all(g[1] == 0)
    assert g[0, 1] == pytest.approx(-1 / 3 / x_val[0, 1])


def test_label_out_of_range_is_a_clear_runtime_error():
    from oar.errors import OpRuntimeError
    from oar.testing import run_forward

    case = OpCase("cross_entropy", {"X": probs(2, 3), "Label": np.array([[0], [5]], "int64")})
    with pytest.raises(OpRuntimeError, match=r"cross_entropy.*outside \[0, 3\)"):
        run_forward(case)


def test_hard_label_must_be_int():
    """A float hard label builds (as in Fluid 1.8) but running it is a clear error at the user's line."""
    from oar import fluid
    from oar.errors import OpRuntimeError

    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.data("x", shape=[3], dtype="float32")
        label = fluid.layers.data("label", shape=[1], dtype="float32")
        loss = fluid.layers.cross_entropy(x, label)
    exe = fluid.Executor(fluid.CPUPlace())
    with pytest.raises(OpRuntimeError, match="hard Label must hold int64") as info:
        exe.run(
            main,
            feed={"x": probs(2, 3).astype("float32"), "label": np.zeros((2, 1), "float32")},
            fetch_list=[loss],
        )
    assert "test_losses_cross_entropy.py" in str(info.value)
