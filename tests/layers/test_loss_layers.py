"""Loss layers: op names/attrs as Fluid builds them, results, and refusal of impossible inputs."""

import numpy as np
import pytest
from oar import fluid

L = fluid.layers


def _build(fn):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        out = fn()
    return main, out


def _x(name, shape, dtype="float32"):
    return L.data(name, shape, dtype=dtype, append_batch_size=False)


def test_softmax_with_cross_entropy_layer_returns_softmax():
    def net():
        return L.softmax_with_cross_entropy(
            _x("x", [3, 4]), _x("l", [3, 1], "int64"), return_softmax=True
        )

    main, (loss, sm) = _build(net)
    op = main.global_block().ops[-1]
    assert op.type == "softmax_with_cross_entropy"
    assert op.attr("numeric_stable_mode") is True and op.attr("ignore_index") == -100
    assert loss.shape == (3, 1) and sm.shape == (3, 4)
    x = np.random.default_rng(0).normal(size=(3, 4)).astype("float32")
    lab = np.array([[1], [0], [3]], "int64")
    got_loss, got_sm = fluid.Executor(fluid.CPUPlace()).run(
        main, feed={"x": x, "l": lab}, fetch_list=[loss, sm]
    )
    e = np.exp(x - x.max(1, keepdims=True))
    p = e / e.sum(1, keepdims=True)
    np.testing.assert_allclose(got_sm, p, rtol=1e-5)
    np.testing.assert_allclose(got_loss[:, 0], -np.log(p[np.arange(3), lab[:, 0]]), rtol=1e-5)


def test_each_loss_layer_builds_its_op():
    builders = {
        "sigmoid_cross_entropy_with_logits": lambda: L.sigmoid_cross_entropy_with_logits(
            _x("x", [3, 4]), _x("l", [3, 4]), ignore_index=-1, normalize=True
        ),
        "log_loss": lambda: L.log_loss(_x("x", [3, 1]), _x("l", [3, 1])),
        "huber_loss": lambda: L.huber_loss(_x("x", [3, 1]), _x("l", [3, 1]), 1.0),
        "smooth_l1_loss": lambda: L.smooth_l1(_x("x", [3, 4]), _x("l", [3, 4])),
        "bpr_loss": lambda: L.bpr_loss(_x("x", [3, 4]), _x("l", [3, 1], "int64")),
        "kldiv_loss": lambda: L.kldiv_loss(_x("x", [3, 4]), _x("l", [3, 4])),
        "reduce_mean": lambda: L.mse_loss(_x("x", [3, 4]), _x("l", [3, 4])),
    }
    shapes = {
        "sigmoid_cross_entropy_with_logits": (3, 4),
        "log_loss": (3, 1),
        "huber_loss": (3, 1),
        "smooth_l1_loss": (3, 1),
        "bpr_loss": (3, 1),
        "kldiv_loss": (1,),
        "reduce_mean": (1,),
    }
    for op_type, fn in builders.items():
        main, out = _build(fn)
        assert main.global_block().ops[-1].type == op_type
        assert out.shape == shapes[op_type], op_type


def test_mse_loss_value():
    main, out = _build(lambda: L.mse_loss(_x("x", [2, 3]), _x("l", [2, 3])))
    a = np.arange(6, dtype="float32").reshape(2, 3)
    b = np.ones((2, 3), "float32")
    (got,) = fluid.Executor(fluid.CPUPlace()).run(main, feed={"x": a, "l": b}, fetch_list=[out])
    np.testing.assert_allclose(got, [np.mean((a - b) ** 2)], rtol=1e-6)


@pytest.mark.parametrize(
    "fn, exc, match",
    [
        (
            lambda: L.softmax_with_cross_entropy(_x("x", [3, 4]), _x("l", [3, 1], "float32")),
            TypeError,
            "int64",
        ),
        (
            lambda: L.softmax_with_cross_entropy(_x("x", [3, 4]), _x("l", [3, 2], "int64")),
            ValueError,
            "must be 1",
        ),
        (
            lambda: L.softmax_with_cross_entropy(_x("x", [3, 4]), _x("l", [2, 1], "int64")),
            ValueError,
            "differ at dim 0",
        ),
        (
            lambda: L.softmax_with_cross_entropy(_x("x", [3, 4]), _x("l", [3, 3]), soft_label=True),
            ValueError,
            "soft Label",
        ),
        (
            lambda: L.softmax_with_cross_entropy(_x("x", [3, 4]), _x("l", [3, 1], "int64"), axis=2),
            ValueError,
            "axis",
        ),
        (
            lambda: L.sigmoid_cross_entropy_with_logits(_x("x", [3, 4]), _x("l", [3, 5])),
            ValueError,
            "same shape",
        ),
        (lambda: L.log_loss(_x("x", [3, 2]), _x("l", [3, 2])), ValueError, r"\[N, 1\]"),
        (lambda: L.huber_loss(_x("x", [3, 1]), _x("l", [3, 1]), -1.0), ValueError, "delta"),
        (lambda: L.huber_loss(_x("x", [3, 1]), _x("l", [4, 1]), 1.0), ValueError, "same shape"),
        (lambda: L.smooth_l1(_x("x", [3, 4]), _x("l", [3, 4]), sigma=0), ValueError, "sigma"),
        (lambda: L.bpr_loss(_x("x", [3, 4]), _x("l", [3, 1])), TypeError, "int64"),
        (
            lambda: L.kldiv_loss(_x("x", [3, 4]), _x("l", [3, 4]), reduction="avg"),
            ValueError,
            "reduction",
        ),
        (lambda: L.mse_loss(_x("x", [3, 4]), _x("l", [4, 3])), ValueError, "shape"),
        (lambda: L.log_loss("x", _x("l", [3, 1])), TypeError, "log_loss: argument 'input'"),
    ],
)
def test_bad_input(fn, exc, match):
    with pytest.raises(exc, match=match):
        _build(fn)
