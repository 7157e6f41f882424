"""oar-kernels-numba's backward fusion: an fc's or a conv's relu_grad + elementwise_add_grad in
one pass, written into the dying incoming gradient where the plan donates it."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip("oar_kernels_numba")
from oar_kernels_numba.compat import unavailable_reason

if unavailable_reason() is not None:
    pytest.skip(f"numba unavailable: {unavailable_reason()}", allow_module_level=True)

from oar import fluid
from oar.api import registries, shape_stand_in
from oar.executor.plan import Plan
from oar.fusion import ENV_DISABLE
from oar_kernels_numba.fusions import _make_bias_relu, _make_relu_bias_grad
from oar_kernels_numba.loss_fusions import _unfused_loss_grad, make_loss_grad

rng = np.random.default_rng(23)
TOL = {"float32": dict(rtol=2e-5, atol=1e-5), "float64": dict(rtol=1e-12, atol=1e-12)}


def _ops():
    return [
        SimpleNamespace(attrs={}, outputs={"X@GRAD": ["a@GRAD"]}),
        SimpleNamespace(attrs={}, outputs={"X@GRAD": ["x@GRAD"], "Y@GRAD": ["b@GRAD"]}),
    ]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(
    "shape, axis",
    [
        ((300, 260), 1),
        ((128, 512), -1),
        ((4, 10), 1),
        ((4, 9, 12, 13), 1),
        ((3, 5, 40, 41), 1),
        ((2, 3, 4, 5), 1),
        ((6, 7, 120), 2),
    ],
    ids=["fc", "fc-axis-1", "small-unfused", "conv", "conv-wide", "conv-small-unfused", "last"],
)
@pytest.mark.parametrize("donate", [(), ("0.Out@GRAD",), ("0.Out",), ("0.Out", "0.Out@GRAD")])
def test_relu_bias_grad_fusion(shape, axis, dtype, donate):
    fused = _make_relu_bias_grad("cpu")(_ops(), None)
    y = np.maximum(rng.standard_normal(shape), 0).astype(dtype)
    y.reshape(-1)[::7] = 0  # some exact zeros: no gradient there
    d = rng.standard_normal(shape).astype(dtype)
    ax = axis % len(shape)
    b = rng.standard_normal(shape[ax]).astype(dtype)
    x = rng.standard_normal(shape).astype(dtype)
    ins = {"0.Out": y.copy(), "0.Out@GRAD": d.copy(), "1.X": x, "1.Y": shape_stand_in(b)}
    given = dict(ins)
    out = fused(ins, {"0": {}, "1": {"axis": axis}}, donated=frozenset(donate))
    dx = d * (y > 0)
    np.testing.assert_array_equal(out["1.X@GRAD"], dx)
    other = tuple(i for i in range(len(shape)) if i != ax)
    np.testing.assert_allclose(out["1.Y@GRAD"], dx.sum(axis=other), **TOL[dtype])
    assert out["1.Y@GRAD"].dtype == np.dtype(dtype) and out["0.X@GRAD"].shape == shape
    if not donate:  # the incoming gradient and the activation are kept
        np.testing.assert_array_equal(given["0.Out@GRAD"], d)
        np.testing.assert_array_equal(given["0.Out"], y)
    elif "0.Out@GRAD" in donate:  # written into the donated gradient, not a new array
        assert out["1.X@GRAD"] is given["0.Out@GRAD"]
        np.testing.assert_array_equal(given["0.Out"], y)
    else:
        assert np.shares_memory(out["1.X@GRAD"], given["0.Out"]) or out["1.X@GRAD"].size < 4096
        np.testing.assert_array_equal(given["0.Out@GRAD"], d)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(
    "shape, axis",
    [((300, 260), 1), ((4, 9, 12, 13), 1), ((2, 3, 4, 5), 1)],
    ids=["fc", "conv", "small"],
)
@pytest.mark.parametrize("donate", [False, True])
def test_bias_relu_fusion_bit_for_bit(shape, axis, dtype, donate):
    fused = _make_bias_relu("cpu")([SimpleNamespace(attrs={}), SimpleNamespace(attrs={})], None)
    x = rng.standard_normal(shape).astype(dtype)
    x.reshape(-1)[:2] = [np.nan, -0.0]
    b = rng.standard_normal(shape[axis]).astype(dtype)
    bshape = [1] * len(shape)
    bshape[axis] = -1
    want = np.maximum(x + b.reshape(bshape), 0)
    given = x.copy()
    out = fused(
        {"0.X": given, "0.Y": b},
        {"0": {"axis": axis}, "1": {}},
        donated=frozenset({"0.X"} if donate else ()),
    )
    np.testing.assert_array_equal(out["1.Out"], want)
    assert out["0.Out"].shape == shape
    if donate and x.size >= 4096:
        assert out["1.Out"] is given  # written into the dying product
    elif not donate:
        np.testing.assert_array_equal(given, x)


def test_the_conv_bias_gradient_does_not_depend_on_the_thread_count(monkeypatch):
    from oar_kernels_numba import _jit

    fused = _make_relu_bias_grad("cpu")(_ops(), None)
    shape = (8, 6, 30, 31)
    y = np.maximum(rng.standard_normal(shape), 0).astype("float32")
    d = rng.standard_normal(shape).astype("float32")
    ins = {"0.Out": y, "0.Out@GRAD": d, "1.X": y, "1.Y": np.zeros(6, "float32")}
    one = fused(dict(ins), {"0": {}, "1": {"axis": 1}})
    monkeypatch.setattr(_jit, "PARALLEL_MIN", 1)  # the parallel twin at every size
    monkeypatch.setattr(_jit, "cpu_math_library_num_threads", lambda: 2)
    two = fused(dict(ins), {"0": {}, "1": {"axis": 1}})
    np.testing.assert_array_equal(one["1.Y@GRAD"], two["1.Y@GRAD"])
    np.testing.assert_array_equal(one["1.X@GRAD"], two["1.X@GRAD"])


def test_a_chain_without_both_gradients_is_declined():
    ops = _ops()
    ops[1].outputs["Y@GRAD"] = []
    assert _make_relu_bias_grad("cpu")(ops, None) is None


def _mlp():
    main, start = fluid.Program(), fluid.Program()
    main.random_seed = start.random_seed = 3
    with fluid.program_guard(main, start):
        x = fluid.data("x", [None, 64], "float32")
        h = fluid.layers.fc(x, 96, act="relu")
        h = fluid.layers.fc(h, 80, act="relu")
        loss = fluid.layers.mean(fluid.layers.fc(h, 1))
        fluid.optimizer.Adam(0.01).minimize(loss)
    return main, start, loss


def _train(main, start, loss, shape=(64, 64)):
    exe, scope = fluid.Executor(fluid.CPUPlace()), fluid.Scope()
    exe.run(start, scope=scope)
    feed = {"x": np.random.default_rng(1).standard_normal(shape).astype("float32")}
    return [exe.run(main, feed=feed, fetch_list=[loss], scope=scope)[0] for _ in range(4)]


def test_an_mlp_trains_the_same_with_the_backward_fusion(monkeypatch):
    main, start, loss = _mlp()
    plan = Plan(main, ("x",), (loss.name,), registries().devices.get("cpu"))
    fused_steps = [s.op.type for s in plan.steps if s.op.type.startswith("fused[")]
    assert fused_steps.count("fused[relu_bias_grad]") == 2
    fused = _train(main, start, loss)
    monkeypatch.setenv(ENV_DISABLE, "1")
    unfused = _train(main.clone(), start, loss)
    np.testing.assert_allclose(np.ravel(fused), np.ravel(unfused), rtol=1e-5)


def _cnn():
    main, start = fluid.Program(), fluid.Program()
    main.random_seed = start.random_seed = 5
    with fluid.program_guard(main, start):
        x = fluid.data("x", [None, 2, 12, 12], "float32")
        h = fluid.layers.conv2d(x, 6, 3, padding=1, act="relu")
        h = fluid.layers.pool2d(h, 2, pool_stride=2)
        h = fluid.layers.conv2d(h, 8, 3, padding=1, act="relu")
        loss = fluid.layers.mean(fluid.layers.fc(h, 1))
        fluid.optimizer.Adam(0.01).minimize(loss)
    return main, start, loss


def test_a_cnn_trains_the_same_with_the_conv_backward_fusion(monkeypatch):
    main, start, loss = _cnn()
    plan = Plan(main, ("x",), (loss.name,), registries().devices.get("cpu"))
    grads = [s for s in plan.steps if s.op.type == "fused[relu_bias_grad]"]
    assert len(grads) == 2 and all(s.call.entry.inplace for s in grads)
    fused = _train(main, start, loss, (16, 2, 12, 12))
    monkeypatch.setenv(ENV_DISABLE, "1")
    unfused = _train(main.clone(), start, loss, (16, 2, 12, 12))
    np.testing.assert_allclose(np.ravel(fused), np.ravel(unfused), rtol=1e-5)


def _loss_ops(ignore_index=-100):
    return [
        SimpleNamespace(attrs={}),
        SimpleNamespace(attrs={"soft_label": False, "ignore_index": ignore_index}, input=_in),
        SimpleNamespace(attrs={"axis": -1}, input=_in),
    ]


def _in(slot):
    return ["p"]


def _loss_inputs(n, c, dtype, labels):
    z = rng.standard_normal((n, c))
    p = np.exp(z - z.max(1, keepdims=True))
    p = (p / p.sum(1, keepdims=True)).astype(dtype)
    return {
        "0.X": np.zeros((n, 1), dtype),
        "0.Out@GRAD": np.ones(1, dtype),
        "1.X": p,
        "1.Label": np.asarray(labels, np.int64).reshape(n, 1),
        "2.Out": p,
    }


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("ignore", [-100, 3])
def test_loss_grad_fusion_bit_for_bit(dtype, ignore):

    attrs = {"0": {}, "1": {"soft_label": False, "ignore_index": ignore}, "2": {"axis": -1}}
    fused = make_loss_grad("cpu")(_loss_ops(ignore), None)
    ins = _loss_inputs(64, 10, dtype, rng.integers(0, 10, 64))
    got = fused(dict(ins), attrs)
    want = _unfused_loss_grad(dict(ins), attrs, "cpu")
    np.testing.assert_array_equal(got["2.X@GRAD"], want["2.X@GRAD"])
    assert got["2.X@GRAD"].dtype == np.dtype(dtype)
    for slot in ("0.X@GRAD", "1.X@GRAD"):
        assert got[slot].shape == want[slot].shape


def test_loss_grad_fusion_raises_the_numpy_error_for_a_bad_label():
    attrs = {"0": {}, "1": {"soft_label": False, "ignore_index": -100}, "2": {"axis": -1}}
    fused = make_loss_grad("cpu")(_loss_ops(), None)
    with pytest.raises(ValueError, match="outside"):
        fused(_loss_inputs(4, 10, "float32", [1, 2, 12, 0]), attrs)


def test_a_soft_label_loss_is_declined():
    ops = _loss_ops()
    ops[1].attrs["soft_label"] = True
    assert make_loss_grad("cpu")(ops, None) is None


def test_a_classifier_trains_the_same_with_the_loss_fusion(monkeypatch):
    main, start = fluid.Program(), fluid.Program()
    main.random_seed = start.random_seed = 4
    with fluid.program_guard(main, start):
        x = fluid.data("x", [None, 64], "float32")
        y = fluid.data("y", [None, 1], "int64")
        h = fluid.layers.fc(x, 96, act="relu")
        pred = fluid.layers.fc(h, 10, act="softmax", bias_attr=False)  # no bias: 3 grad ops
        loss = fluid.layers.mean(fluid.layers.cross_entropy(pred, y))
        fluid.optimizer.Adam(0.01).minimize(loss)
    plan = Plan(main, ("x", "y"), (loss.name,), registries().devices.get("cpu"))
    assert "fused[mean_cross_entropy_softmax_grad]" in [s.op.type for s in plan.steps]
    r = np.random.default_rng(2)
    feed = {"x": r.standard_normal((64, 64)).astype("float32"), "y": r.integers(0, 10, (64, 1))}

    def train(prog):
        exe, scope = fluid.Executor(fluid.CPUPlace()), fluid.Scope()
        exe.run(start, scope=scope)
        return [exe.run(prog, feed=feed, fetch_list=[loss], scope=scope)[0] for _ in range(4)]

    fused = train(main)
    monkeypatch.setenv(ENV_DISABLE, "1")
    unfused = train(main.clone())
    np.testing.assert_allclose(np.ravel(fused), np.ravel(unfused), rtol=1e-6)
