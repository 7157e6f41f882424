"""top_k (values, indices and gradient) and accuracy."""

import numpy as np
import pytest
from oar.testing import OpCase, check_case, run_forward

rng = np.random.default_rng(8)


def distinct(*shape):
    """Well-separated values, so no tie and no swap within a finite-difference step."""
    n = int(np.prod(shape))
    return (rng.permutation(n).reshape(shape) * 0.1 + 0.05).astype("float64")


def _topk_ref(X, k=1, **_):
    idx = np.argsort(-X, axis=-1, kind="stable")[..., :k]
    return {"Out": np.take_along_axis(X, idx, -1), "Indices": idx.astype("int64")}


def _acc_ref(Out, Indices, Label):
    correct = int(sum(Label[i, 0] in Indices[i] for i in range(len(Label))))
    return {
        "Accuracy": np.array([correct / len(Label)], "float32"),
        "Correct": np.array([correct], "int32"),
        "Total": np.array([len(Label)], "int32"),
    }


_idx = np.array([[2, 0], [1, 3], [0, 1], [3, 2]], "int64")
CASES = [
    OpCase("top_k", {"X": distinct(3, 5)}, {"k": 2}, ref=_topk_ref, grad=["X"], name="k2"),
    OpCase("top_k", {"X": distinct(2, 2, 4)}, {"k": 1}, ref=_topk_ref, grad=["X"], name="3d-k1"),
    OpCase(
        "top_k",
        {"X": distinct(2, 4), "K": np.array([3], "int32")},
        {"k": 1},
        ref=lambda X, K, **_: _topk_ref(X, 3),
        name="k-tensor",
        outputs={"Out": 1, "Indices": 1},
    ),
    OpCase(
        "accuracy",
        {
            "Out": rng.uniform(size=(4, 2)).astype("float32"),
            "Indices": _idx,
            "Label": np.array([[0], [2], [1], [3]], "int64"),
        },
        ref=_acc_ref,
        name="top2",
    ),
    OpCase(
        "accuracy",
        {
            "Out": rng.uniform(size=(3, 1)).astype("float32"),
            "Indices": np.array([[1], [0], [2]], "int64"),
            "Label": np.array([[1], [0], [2]], "int64"),
        },
        ref=_acc_ref,
        name="all-correct",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_metric(case):
    check_case(case)


def test_accuracy_values():
    got = run_forward(CASES[3])
    assert got["Accuracy"][0].dtype == np.float32
    assert got["Accuracy"][0][0] == pytest.approx(0.75)
    assert got["Correct"][0][0] == 3 and got["Total"][0][0] == 4


def test_accuracy_layer_on_softmax():
    from oar import fluid

    with fluid.program_guard(fluid.Program(), fluid.Program()):
        x = fluid.layers.data("x", shape=[4], dtype="float32")
        label = fluid.layers.data("label", shape=[1], dtype="int64")
        acc = fluid.layers.accuracy(input=fluid.layers.softmax(x), label=label, k=1)
        main = fluid.default_main_program()
    xv = np.array([[0, 3, 1, 0], [5, 0, 0, 1], [0, 0, 0, 9]], "float32")
    exe = fluid.Executor(fluid.CPUPlace())
    (a,) = exe.run(
        main,
        feed={"x": xv, "label": np.array([[1], [2], [3]], "int64")},
        fetch_list=[acc],
        scope=fluid.Scope(),
    )
    assert a.shape == (1,) and a[0] == pytest.approx(2 / 3)


def test_top_k_larger_than_dim_is_refused():
    from oar import fluid

    with fluid.program_guard(fluid.Program(), fluid.Program()):
        x = fluid.layers.data("x", shape=[3], dtype="float32")
        with pytest.raises(ValueError, match="k=4 is larger than X's last dim 3"):
            fluid.layers.topk(x, k=4)


def test_top_k_partial_path_keeps_the_stable_order():
    """k much smaller than the row goes through argpartition; ties (inside the top k or
    straddling its edge) must still come lower index first, as the full stable sort gives."""
    from oar_kernels_cpu.kernels.metric import top_k

    gen = np.random.default_rng(4)
    for trial in range(60):
        n = int(gen.integers(20, 80))
        k = int(gen.integers(1, n // 4))
        if trial % 2:
            x = gen.integers(0, 5, (3, n)).astype("float32")
        else:
            x = gen.standard_normal((3, n)).astype("float32")
        got = top_k({"X": x}, {"k": k})["Indices"]
        np.testing.assert_array_equal(got, np.argsort(-x, axis=-1, kind="stable")[..., :k])
