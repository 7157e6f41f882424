"""Eager fusion through the fusion hook: a Linear layer's bias add + activation traced as one
fused kernel, and the backward sweep running a chain of tape nodes as one fused grad kernel.

The fusions here are this file's own (registered in a scoped registry at a high priority), so
the tests check the tracer's side whatever kernel plugins are installed: every fused result
must equal the unfused one, and every pattern where an intermediate's gradient can be read
must keep the unfused backward.
"""

from __future__ import annotations

import numpy as np
import pytest
from oar import fluid
from oar.api import shape_stand_in
from oar.dygraph import chain
from oar.errors import OpRuntimeError
from oar.fusion import ENV_DISABLE
from oar.testing import eager_sgd_steps, scoped_registry

calls: dict = {"fwd": 0, "bwd": 0}
WRONG = {"scale": 1.0}  # a fused grad kernel computing wrong values, for the meta-test
BROKEN: set = set()  # "fwd" / "bwd": that fused kernel fails as a plugin bug would


def _make_fwd(ops, block):
    def bias_sigmoid(inputs, attrs):
        calls["fwd"] += 1
        if "fwd" in BROKEN:
            raise ValueError("plugin bug")
        t = inputs["0.X"] + inputs["0.Y"]
        return {"0.Out": shape_stand_in(t), "1.Out": 1.0 / (1.0 + np.exp(-t))}

    return bias_sigmoid


def _make_softplus(ops, block):
    def bias_softplus(inputs, attrs):  # softplus_grad reads X: the tracer must decline
        calls["fwd"] += 1
        t = inputs["0.X"] + inputs["0.Y"]
        return {"0.Out": shape_stand_in(t), "1.Out": np.log1p(np.exp(t))}

    return bias_softplus


def _make_bwd(ops, block):
    sig, add = ops
    if set(add.outputs) != {"X@GRAD", "Y@GRAD"}:
        return None  # writes both gradients, like oar-kernels-numba's
    assert sig.output("X@GRAD") == add.input("Out@GRAD")  # names consistent along the chain

    def sigmoid_bias_grad(inputs, attrs):
        calls["bwd"] += 1
        if "bwd" in BROKEN:
            raise ValueError("plugin bug")
        y, d = inputs["0.Out"], inputs["0.Out@GRAD"]
        dx = d * y * (1.0 - y) * WRONG["scale"]
        return {"0.X@GRAD": shape_stand_in(dx), "1.X@GRAD": dx, "1.Y@GRAD": dx.sum(axis=0)}

    return sigmoid_bias_grad


@pytest.fixture(autouse=True)
def fusions(monkeypatch):
    monkeypatch.delenv(ENV_DISABLE, raising=False)
    monkeypatch.setattr(chain, "SMALL_CHAIN", 0)  # this file's arrays are small: fuse anyway
    with scoped_registry() as reg:
        reg.fusions.current_plugin = "test-eager-fusion"
        add = "elementwise_add"
        reg.fusions.register_fusion("test_bias_sigmoid", (add, "sigmoid"), "cpu", _make_fwd, 1000)
        reg.fusions.register_fusion(
            "test_bias_softplus", (add, "softplus"), "cpu", _make_softplus, 1000
        )
        reg.fusions.register_fusion(
            "test_sigmoid_bias_grad",
            ("sigmoid_grad", "elementwise_add_grad"),
            "cpu",
            _make_bwd,
            1000,
        )
        reg.fusions.current_plugin = "?"
        calls.update(fwd=0, bwd=0)
        WRONG["scale"] = 1.0
        BROKEN.clear()
        yield reg


def _data(dtype, batch=6, n_in=5):
    rng = np.random.default_rng(3)
    return rng.standard_normal((batch, n_in)).astype(dtype)


def _mlp(dtype, act="sigmoid", n_in=5, sizes=(7, 3), seed=4):
    rng = np.random.default_rng(seed)
    init = fluid.initializer.NumpyArrayInitializer
    layers, prev = [], n_in
    for i, n in enumerate(sizes):
        w = rng.standard_normal((prev, n)).astype(dtype) * 0.5
        b = rng.standard_normal(n).astype(dtype) * 0.1
        layers.append(
            fluid.dygraph.Linear(
                prev,
                n,
                act=act if i < len(sizes) - 1 else None,
                param_attr=fluid.ParamAttr(initializer=init(w)),
                bias_attr=fluid.ParamAttr(initializer=init(b)),
                dtype=dtype,
            )
        )
        prev = n
    return fluid.dygraph.Sequential(*layers)


def _train(dtype="float32", act="sigmoid", steps=2, **kw):
    """Loss values and final parameters and gradients of a few SGD steps."""
    with fluid.dygraph.guard():
        model = _mlp(dtype, act, **kw)
        x = fluid.dygraph.to_variable(_data(dtype, n_in=kw.get("n_in", 5)))
        return eager_sgd_steps(
            model, lambda m: fluid.layers.reduce_mean(fluid.layers.square(m(x))), steps, 0.5
        )


def _unfused(monkeypatch, fn, *args, **kw):
    monkeypatch.setenv(ENV_DISABLE, "1")
    try:
        return fn(*args, **kw)
    finally:
        monkeypatch.delenv(ENV_DISABLE)


def _assert_same(a, b, rtol=1e-6):
    for x, y in zip(a, b, strict=True):
        if isinstance(x, list):
            _assert_same(x, y, rtol)
        else:
            np.testing.assert_allclose(x, y, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("sizes", [(7, 3), (4, 9, 2)], ids=["2-layer", "3-layer"])
def test_fused_linear_trains_as_unfused(monkeypatch, dtype, sizes):
    fused = _train(dtype, sizes=sizes)
    hidden = len(sizes) - 1
    assert calls == {"fwd": 2 * hidden, "bwd": 2 * hidden}  # every hidden layer, both ways
    calls.update(fwd=0, bwd=0)
    unfused = _unfused(monkeypatch, _train, dtype, sizes=sizes)
    assert calls == {"fwd": 0, "bwd": 0}
    _assert_same(fused, unfused, 1e-6 if dtype == "float32" else 1e-12)


def test_a_wrong_fused_kernel_is_caught(monkeypatch):
    """The comparison above can fail: a fused grad kernel off by 10 % changes the result."""
    WRONG["scale"] = 1.1
    fused = _train()
    assert calls["bwd"]
    unfused = _unfused(monkeypatch, _train)
    with pytest.raises(AssertionError):
        _assert_same(fused, unfused)


@pytest.mark.parametrize(
    "where, name",
    [("fwd", "fused op 'test_bias_sigmoid'"), ("bwd", "fused backward 'test_sigmoid_bias_grad'")],
)
def test_a_failing_fused_kernel_is_named(where, name):
    BROKEN.add(where)
    with pytest.raises(
        OpRuntimeError, match=f"{name} failed in dygraph mode: ValueError: plugin bug"
    ):
        _train()


def test_no_fusion_for_other_activations_or_a_grad_reading_the_intermediate(monkeypatch):
    for act in ("tanh", "softplus"):  # no fusion registered; softplus_grad reads X
        fused = _train(act=act)
        assert calls == {"fwd": 0, "bwd": 0}
        _assert_same(fused, _unfused(monkeypatch, _train, act=act))


def test_traced_layer_and_no_grad(monkeypatch):
    with fluid.dygraph.guard():
        model = _mlp("float32")
        x = fluid.dygraph.to_variable(_data("float32"))
        with fluid.dygraph.no_grad():
            y = model(x)
        assert calls["fwd"] == 1 and y._node is None
        ref = _unfused(monkeypatch, model, x)
        np.testing.assert_allclose(y.numpy(), ref.numpy(), rtol=1e-6)
        calls["fwd"] = 0
        _out, traced = fluid.dygraph.TracedLayer.trace(model, [x])
        assert calls["fwd"] == 0  # the recorded program holds the unfused ops
        np.testing.assert_allclose(np.asarray(traced([x])[0]), ref.numpy(), rtol=1e-6)


# --- the backward sweep keeps the unfused path wherever an intermediate's gradient is visible ---


def _chain(dtype="float32", keep=False, grad_of_t=False, retain=False, stop_bias=False):
    """``mean(square(sigmoid(x @ w + b)))`` written with layer functions; returns what the
    caller may compare: the loss, the gradients of w and b, and of the intermediate t."""
    rng = np.random.default_rng(8)
    with fluid.dygraph.guard():
        w = fluid.dygraph.to_variable(rng.standard_normal((5, 4)).astype(dtype))
        b = fluid.dygraph.to_variable(rng.standard_normal(4).astype(dtype))
        w.stop_gradient = False
        b.stop_gradient = stop_bias
        x = fluid.dygraph.to_variable(_data(dtype))
        m = fluid.layers.matmul(x, w)
        t = fluid.layers.elementwise_add(m, b)
        y = fluid.layers.sigmoid(t)
        loss = fluid.layers.reduce_mean(fluid.layers.square(y))
        if not keep:
            del t, y
        out = {"loss": loss.numpy()}
        if grad_of_t:
            gt, gw = fluid.dygraph.grad(loss, [t, w])
            out.update(t=gt.numpy(), w=gw.numpy())
            return out
        loss.backward(retain_graph=retain)
        if retain:
            loss.backward()
        out["w"] = w.gradient()
        out["b"] = None if stop_bias else b.gradient()
        if keep:
            out["t"] = t.gradient()
            out["y"] = y.gradient()
        return out


def _compare(a, b):
    assert a.keys() == b.keys()
    for k in a:
        if a[k] is None:
            assert b[k] is None, k
        else:
            np.testing.assert_allclose(a[k], b[k], rtol=1e-6, atol=1e-7, err_msg=k)


@pytest.mark.parametrize(
    "case, fuses",
    [
        ({}, True),
        ({"retain": True}, True),  # backward twice: the tape is left as it was
        ({"keep": True}, False),  # the user holds t and y: their gradients stay readable
        ({"grad_of_t": True, "keep": True}, False),  # fluid.dygraph.grad asks for t's gradient
        ({"stop_bias": True}, False),  # the fused kernel writes both gradients: declined
    ],
    ids=["plain", "retain-graph", "kept-intermediates", "grad-of-intermediate", "stop-gradient"],
)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_backward_chain_fuses_only_when_intermediates_are_private(monkeypatch, case, fuses, dtype):
    fused = _chain(dtype, **case)
    assert calls["bwd"] == (2 if case.get("retain") else 1 if fuses else 0)
    unfused = _unfused(monkeypatch, _chain, dtype, **case)
    _compare(fused, unfused)
    if case.get("keep") and not case.get("grad_of_t"):
        assert fused["t"] is not None and fused["y"] is not None


def test_intermediate_read_twice_on_the_loss_path_is_not_fused(monkeypatch):
    def run():
        with fluid.dygraph.guard():
            rng = np.random.default_rng(9)
            w = fluid.dygraph.to_variable(rng.standard_normal((5, 4)).astype("float32"))
            b = fluid.dygraph.to_variable(rng.standard_normal(4).astype("float32"))
            w.stop_gradient = b.stop_gradient = False
            t = fluid.layers.elementwise_add(
                fluid.layers.matmul(fluid.dygraph.to_variable(_data("float32")), w), b
            )
            loss = fluid.layers.reduce_mean(fluid.layers.sigmoid(t) + t * 2.0)
            del t
            loss.backward()
            return {"w": w.gradient(), "b": b.gradient()}

    fused = run()
    assert calls["bwd"] == 0  # t's gradient has two sources
    _compare(fused, _unfused(monkeypatch, run))


def test_spent_gradients_are_freed_but_kept_ones_stay_readable():
    """The sweep frees an intermediate's gradient once its producer has run, unless the
    variable is still held (then ``gradient()`` reads it, as in Fluid)."""
    import gc
    import weakref

    from oar.dygraph import backward

    freed: list = []
    drop = backward._drop_spent

    def spy(outs, grads):
        before = {k: weakref.ref(e[1]) for k, e in grads.items() if isinstance(e[1], np.ndarray)}
        drop(outs, grads)
        freed.extend(r for k, r in before.items() if k not in grads)

    rng = np.random.default_rng(5)
    xv = rng.standard_normal((3, 4)).astype("float32")
    wv = rng.standard_normal((4, 2)).astype("float32")
    with fluid.dygraph.guard():
        x = fluid.dygraph.to_variable(xv)
        w = fluid.dygraph.to_variable(wv)
        w.stop_gradient = False
        kept = fluid.layers.matmul(x, w)
        backward._drop_spent = spy
        try:
            loss = fluid.layers.reduce_sum(fluid.layers.square(fluid.layers.tanh(kept)))
            loss.backward()
        finally:
            backward._drop_spent = drop
        gc.collect()
        assert freed and all(r() is None for r in freed)  # tanh's output grad: gone
        t = np.tanh(xv @ wv)
        np.testing.assert_allclose(kept.gradient(), 2 * t * (1 - t * t), rtol=1e-5)
        np.testing.assert_allclose(w.gradient(), xv.T @ (2 * t * (1 - t * t)), rtol=1e-5)


def test_small_two_op_chains_run_op_by_op(monkeypatch):
    """Below ``SMALL_CHAIN`` elements a bias + activation chain (and its gradient) is traced
    op by op: the numpy calls cost less than a fused kernel's dispatch."""
    monkeypatch.setattr(chain, "SMALL_CHAIN", 6 * 7 + 1)  # one more than the hidden layer's
    small = _train()
    assert calls == {"fwd": 0, "bwd": 0}
    monkeypatch.setattr(chain, "SMALL_CHAIN", 6 * 7)
    _assert_same(_train(), small)
    assert calls == {"fwd": 2, "bwd": 2}
