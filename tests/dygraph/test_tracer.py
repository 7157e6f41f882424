"""Tape behaviour: no_grad, gradient accumulation, errors, operators, indexing, detach."""

import numpy as np
import pytest
from oar import fluid
from oar.errors import OarError


def _var(arr, stop_gradient=False):
    v = fluid.dygraph.to_variable(np.asarray(arr, dtype="float32"))
    v.stop_gradient = stop_gradient
    return v


def test_guard_sets_mode_and_restores():
    assert not fluid.in_dygraph_mode()
    with fluid.dygraph.guard():
        assert fluid.in_dygraph_mode()
    assert not fluid.in_dygraph_mode()
    fluid.enable_dygraph()
    try:
        assert fluid.in_dygraph_mode()
    finally:
        fluid.disable_dygraph()
    assert not fluid.in_dygraph_mode()


def test_to_variable_is_data():
    with fluid.dygraph.guard():
        x = fluid.dygraph.to_variable(np.ones((2, 3), "float32"), name="x")
        assert x.stop_gradient and not x.persistable
        assert x.shape == [2, 3] and x.dtype == "float32" and x.name == "x"
        with pytest.raises(TypeError, match="to_variable"):
            fluid.dygraph.to_variable("abc")
    with pytest.raises(RuntimeError, match="dygraph mode"):
        fluid.dygraph.to_variable(np.ones(2))


def test_no_grad_builds_no_tape():
    with fluid.dygraph.guard():
        x = _var([1.0, 2.0])
        with fluid.dygraph.no_grad():
            y = fluid.layers.relu(x * 2.0)
        assert y._node is None and y.stop_gradient

        @fluid.dygraph.no_grad
        def f(a):
            return a + a

        z = f(x)
        assert z._node is None and z.stop_gradient
        w = x + x  # outside no_grad the tape records again
        assert w._node is not None and not w.stop_gradient


def test_variable_used_twice_accumulates():
    with fluid.dygraph.guard():
        x = _var([1.0, 2.0, 3.0])
        y = x * x + x * 3.0  # x used three times
        loss = fluid.layers.mean(y)
        loss.backward()
        np.testing.assert_allclose(x.gradient(), (2 * np.array([1, 2, 3]) + 3) / 3, rtol=1e-6)


def test_gradients_accumulate_across_backward_until_cleared():
    with fluid.dygraph.guard():
        x = _var([1.0, 2.0])
        for _ in range(2):
            fluid.layers.mean(x * 2.0).backward()
        np.testing.assert_allclose(x.gradient(), [2.0, 2.0])
        x.clear_gradient()
        assert x.gradient() is None


def test_backward_errors_are_clear():
    with fluid.dygraph.guard():
        x = _var([[1.0, 2.0]])
        with pytest.raises(OarError, match="scalar"):
            (x * 2.0).backward()
        d = fluid.dygraph.to_variable(np.ones((1,), "float32"))
        with pytest.raises(OarError, match="stop_gradient=True"):
            fluid.layers.mean(d).backward()
        loss = fluid.layers.mean(x * 2.0)
        loss.backward()
        with pytest.raises(OarError, match="retain_graph"):
            loss.backward()


def test_retain_graph_allows_second_backward():
    with fluid.dygraph.guard():
        x = _var([1.0, 2.0])
        loss = fluid.layers.mean(x * x)
        loss.backward(retain_graph=True)
        loss.backward()
        np.testing.assert_allclose(x.gradient(), 2 * np.array([1.0, 2.0]))


def test_stop_gradient_input_gets_no_gradient():
    with fluid.dygraph.guard():
        a, b = _var([1.0, 2.0]), _var([3.0, 4.0], stop_gradient=True)
        fluid.layers.mean(a * b).backward()
        np.testing.assert_allclose(a.gradient(), [1.5, 2.0])
        assert b.gradient() is None


def test_detach_cuts_the_graph():
    with fluid.dygraph.guard():
        x = _var([1.0, 2.0])
        y = (x * 3.0).detach()
        assert y.stop_gradient and y._node is None
        np.testing.assert_allclose(y.numpy(), [3.0, 6.0])


def test_operators_and_astype():
    with fluid.dygraph.guard():
        a, b = _var([1.0, 2.0]), _var([4.0, 8.0])
        np.testing.assert_allclose((a + b).numpy(), [5, 10])
        np.testing.assert_allclose((b - a).numpy(), [3, 6])
        np.testing.assert_allclose((a * b).numpy(), [4, 16])
        np.testing.assert_allclose((b / a).numpy(), [4, 4])
        np.testing.assert_allclose((1.0 - a).numpy(), [0, -1])
        np.testing.assert_allclose((2.0 / a).numpy(), [2, 1])
        np.testing.assert_allclose((-a).numpy(), [-1, -2])
        np.testing.assert_allclose((a**2.0).numpy(), [1, 4])
        c = a.astype("float64")
        assert c.dtype == "float64"
        m = _var(np.eye(2)) @ _var([[1.0], [2.0]])
        np.testing.assert_allclose(m.numpy(), [[1.0], [2.0]])


def test_indexing_as_the_seed_uses_it():
    with fluid.dygraph.guard():
        w = fluid.dygraph.to_variable(np.arange(24, dtype="float32").reshape(2, 3, 2, 2))
        k = w[0][0]
        assert k.shape == [2, 2]
        np.testing.assert_array_equal(k.numpy(), np.arange(4).reshape(2, 2))
        idx = np.random.randint(0, 3)
        np.testing.assert_array_equal(w[1][idx].numpy(), w.numpy()[1, idx])
        assert "shape: [2, 2]" in str(k)
        with pytest.raises(IndexError, match="out of range"):
            w[5]


def test_numpy_is_a_copy():
    with fluid.dygraph.guard():
        x = _var([1.0])
        a = x.numpy()
        a[0] = 7
        assert x.numpy()[0] == 1.0


def test_kernel_failure_names_the_op():
    with fluid.dygraph.guard():
        a, b = _var(np.ones((2, 3))), _var(np.ones((4, 5)))
        with pytest.raises(OarError, match="elementwise_add"):
            fluid.layers.elementwise_add(a, b)


@pytest.mark.skipif(
    "slice" not in __import__("oar.plugins", fromlist=["registries"]).registries().ops,
    reason="the slice op is not installed yet",
)
def test_indexing_carries_gradient_through_slice():
    with fluid.dygraph.guard():
        w = _var(np.arange(24).reshape(2, 3, 4))
        k = w[1][2]
        assert k.shape == [4] and not k.stop_gradient
        part = w[:, 1:3]
        assert part.shape == [2, 2, 4]
        fluid.layers.mean(k * k).backward()
        want = np.zeros((2, 3, 4), "float32")
        want[1, 2] = np.arange(20, 24) / 2.0
        np.testing.assert_allclose(w.gradient(), want)


def test_dygraph_grad_returns_without_accumulating():
    with fluid.dygraph.guard():
        x = _var([1.0, 2.0, 3.0])
        y = x * x
        (gx,) = fluid.dygraph.grad(y, x, grad_outputs=[np.array([1.0, 1.0, 2.0], "float32")])
        np.testing.assert_allclose(gx.numpy(), [2.0, 4.0, 12.0])
        assert x.gradient() is None
        z = _var([1.0])
        with pytest.raises(OarError, match="allow_unused"):
            fluid.dygraph.grad(fluid.layers.mean(x * 2.0), [x, z])
        w = x * 3.0
        gx, gz = fluid.dygraph.grad(fluid.layers.mean(w), [x, z], allow_unused=True)
        assert gz is None and np.allclose(gx.numpy(), 1.0)
        strategy = fluid.dygraph.BackwardStrategy()
        strategy.sort_sum_gradient = True
        fluid.layers.mean(x * x).backward(strategy)
        np.testing.assert_allclose(x.gradient(), np.array([2.0, 4.0, 6.0]) / 3, rtol=1e-6)


def test_tape_is_freed_without_the_cycle_collector():
    import gc
    import weakref

    with fluid.dygraph.guard():
        x = _var(np.ones((3, 4)))
        was = gc.isenabled()
        gc.disable()
        try:
            h = fluid.layers.relu(x * 2.0)
            loss = fluid.layers.mean(h)
            probe = weakref.ref(h)
            del h
            assert probe() is not None  # kept alive by the tape below the loss
            del loss
            assert probe() is None  # no var <-> node cycle keeps the step's tape
        finally:
            if was:
                gc.enable()


def test_plugin_provided_dygraph_names_say_what_to_install():
    from oar.errors import MissingPluginError
    from oar.plugins import registries

    if "dygraph.parallel" in registries().fluid_api:
        pytest.skip("oar-dist is installed")
    with pytest.raises(MissingPluginError, match="oar-dist"):
        fluid.dygraph.parallel.Env()
    with pytest.raises(AttributeError):
        fluid.dygraph.no_such_name  # noqa: B018
