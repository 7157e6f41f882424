"""A dygraph Linear call recorded as one tape node (oar.dygraph.linear_node): the same values
and gradients as the op-by-op tape (mul, elementwise_add, activation), for every activation
it covers, with and without a gradient for the input, at rank 2 and 3, in both float types,
small and large (fused kernels where a plugin offers them); and the tape's other uses."""

from __future__ import annotations

import numpy as np
import pytest
from oar import fluid
from oar.dygraph import linear_node, nn
from oar.errors import OarError, OpRuntimeError


@pytest.fixture
def deterministic():
    fluid.set_flags({"FLAGS_cpu_deterministic": True})  # the same GEMM summing order each run
    yield
    fluid.set_flags({"FLAGS_cpu_deterministic": False})


def _run(act, dtype, shape, x_grad, out_dim, one_node, monkeypatch):
    """Values and gradients of ``sum(Linear(x) * r)``, through the node or op by op."""
    if not one_node:
        monkeypatch.setattr(nn, "trace_linear", lambda *a: None)
    rng = np.random.default_rng(3)
    xv = rng.standard_normal(shape).astype(dtype)
    w = rng.standard_normal((shape[-1], out_dim)).astype(dtype)
    b = rng.uniform(-0.5, 0.5, out_dim).astype(dtype)
    r = rng.standard_normal(shape[:-1] + (out_dim,)).astype(dtype)
    init = fluid.initializer.NumpyArrayInitializer
    with fluid.dygraph.guard():
        layer = fluid.dygraph.Linear(
            shape[-1],
            out_dim,
            act=act,
            param_attr=fluid.ParamAttr(initializer=init(w)),
            bias_attr=fluid.ParamAttr(initializer=init(b)),
            dtype=dtype,
        )
        x = fluid.dygraph.to_variable(xv)
        x.stop_gradient = not x_grad
        out = layer(x)
        kind = type(out._node).__name__
        loss = fluid.layers.reduce_sum(out * fluid.dygraph.to_variable(r))
        loss.backward()
        grads = [layer.weight.gradient(), layer.bias.gradient()]
        grads.append(x.gradient() if x_grad else None)
        return kind, out.numpy(), grads


@pytest.mark.parametrize("act", [None, "relu", "sigmoid", "tanh"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("x_grad", [False, True], ids=["x-data", "x-grad"])
@pytest.mark.parametrize(
    "shape, out_dim", [((6, 5), 4), ((2, 3, 5), 4), ((96, 40), 64)], ids=["2d", "3d", "large"]
)
def test_one_node_equals_the_op_by_op_tape(
    act, dtype, x_grad, shape, out_dim, deterministic, monkeypatch
):
    kind, out, grads = _run(act, dtype, shape, x_grad, out_dim, True, monkeypatch)
    assert kind == "LinearNode"
    ref_kind, ref_out, ref_grads = _run(act, dtype, shape, x_grad, out_dim, False, monkeypatch)
    assert ref_kind != "LinearNode"
    np.testing.assert_array_equal(out, ref_out)
    for g, ref in zip(grads, ref_grads, strict=True):
        if ref is None:
            assert g is None
        else:
            np.testing.assert_array_equal(g, ref)


def test_softmax_and_bias_free_layers_stay_op_by_op():
    with fluid.dygraph.guard():
        x = fluid.dygraph.to_variable(np.ones((3, 4), np.float32))
        soft = fluid.dygraph.Linear(4, 2, act="softmax")(x)
        free = fluid.dygraph.Linear(4, 2, bias_attr=False, act="relu")(x)
        assert type(soft._node).__name__ == "_Node" and soft._node.type == "softmax"
        assert type(free._node).__name__ == "_Node" and free._node.type == "relu"


def test_retained_graph_runs_twice_and_a_released_one_says_so():
    with fluid.dygraph.guard():
        layer = fluid.dygraph.Linear(4, 3, act="relu")
        x = fluid.dygraph.to_variable(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4))
        loss = fluid.layers.reduce_sum(layer(x))
        loss.backward(retain_graph=True)
        once = layer.weight.gradient().copy()
        loss.backward()
        np.testing.assert_allclose(layer.weight.gradient(), 2 * once, rtol=1e-6)
        with pytest.raises(OarError, match="released by an earlier backward"):
            loss.backward()


def test_gradient_to_the_input_through_dygraph_grad(monkeypatch):
    def run():
        with fluid.dygraph.guard():
            layer = fluid.dygraph.Linear(
                4, 3, act="tanh", param_attr=fluid.initializer.Constant(0.3), dtype="float64"
            )
            x = fluid.dygraph.to_variable(np.linspace(-2, 2, 8, dtype=np.float64).reshape(2, 4))
            x.stop_gradient = False
            (gx,) = fluid.dygraph.grad([fluid.layers.reduce_sum(layer(x))], [x])
            return gx.numpy()

    got = run()
    monkeypatch.setattr(nn, "trace_linear", lambda *a: None)
    np.testing.assert_allclose(got, run(), rtol=1e-12)


def test_no_grad_records_no_node():
    with fluid.dygraph.guard():
        layer = fluid.dygraph.Linear(4, 3, act="relu")
        with fluid.dygraph.no_grad():
            out = layer(fluid.dygraph.to_variable(np.ones((2, 4), np.float32)))
        assert out._node is None and out.stop_gradient


def test_a_failing_grad_kernel_is_named(monkeypatch):
    with fluid.dygraph.guard():
        layer = fluid.dygraph.Linear(4, 3, act="relu")
        out = layer(fluid.dygraph.to_variable(np.ones((2, 4), np.float32)))
        kind = out._node.kind
        broken = list(kind.steps)

        def fail(env):
            raise OpRuntimeError("op 'mul_grad' failed in dygraph mode: boom")

        broken[-1] = fail
        monkeypatch.setattr(kind, "steps", tuple(broken))
        with pytest.raises(OpRuntimeError, match="mul_grad"):
            fluid.layers.reduce_sum(out).backward()


def test_traced_layer_records_the_three_ops():
    with fluid.dygraph.guard():
        layer = fluid.dygraph.Linear(4, 3, act="relu")
        x = fluid.dygraph.to_variable(np.ones((2, 4), np.float32))
        _out, traced = fluid.dygraph.TracedLayer.trace(layer, inputs=[x])
        types = [op.type for op in traced.program.global_block().ops]
        assert ["mul", "elementwise_add", "relu"] == [
            t for t in types if t in ("mul", "elementwise_add", "relu")
        ]
    assert linear_node.ACTS >= {None, "relu"}


def _two_layers(share, keep_hidden, one_node, monkeypatch):
    """Gradients of a model where a hidden value is kept by the user, or one gradient array
    reaches two layers (``a + b``): no layer may overwrite a gradient someone else sees."""
    if not one_node:
        monkeypatch.setattr(nn, "trace_linear", lambda *a: None)
    rng = np.random.default_rng(5)
    xv = rng.standard_normal((96, 40)).astype("float32")
    init = fluid.initializer.NumpyArrayInitializer
    ws = [rng.standard_normal(s).astype("float32") * 0.3 for s in ((40, 64), (64, 64), (40, 64))]
    with fluid.dygraph.guard():
        l1, l2, l3 = (
            fluid.dygraph.Linear(w.shape[0], 64, act="relu", param_attr=init(w)) for w in ws
        )
        x = fluid.dygraph.to_variable(xv)
        h = l1(x)
        out = l2(h) + l3(x) if share else l2(h)
        if not keep_hidden:
            del h  # only the tape holds it: its incoming gradient may be overwritten
        loss = fluid.layers.reduce_sum(out * out)
        loss.backward()
        layers = (l1, l2, l3) if share else (l1, l2)
        got = [p.gradient() for layer in layers for p in layer.parameters()]
        if keep_hidden:
            got.append(h.gradient())
        return got


@pytest.mark.parametrize("share", [False, True], ids=["chain", "a+b"])
@pytest.mark.parametrize("keep_hidden", [False, True], ids=["h-dropped", "h-kept"])
def test_gradients_seen_elsewhere_are_not_overwritten(
    share, keep_hidden, deterministic, monkeypatch
):
    got = _two_layers(share, keep_hidden, True, monkeypatch)
    ref = _two_layers(share, keep_hidden, False, monkeypatch)
    for g, r in zip(got, ref, strict=True):
        np.testing.assert_allclose(g, r, rtol=1e-5, atol=1e-6)
