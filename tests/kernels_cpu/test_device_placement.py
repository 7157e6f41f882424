"""Values live on the place that runs them, on any device (here the ``checking`` one, whose
arrays have their own type, as cupy's do): dygraph's ``to_variable`` puts the guard's data there
and ``.numpy()`` copies back; a static program on a device reads host arrays that a CPU executor
or the user left in the scope by moving them there once."""

from __future__ import annotations

import numpy as np
from oar import fluid
from oar.testing import CheckingArray, place_for

CHECKING = place_for("checking")


def _dygraph_steps(place, steps=3):
    with fluid.dygraph.guard(place):
        fluid.default_main_program().random_seed = 5
        lin = fluid.dygraph.Linear(8, 4, act="relu")
        # the same start on both devices: the weights come from the host
        lin.weight.set_value(np.linspace(-1, 1, 32, dtype="float32").reshape(8, 4))
        lin.bias.set_value(np.full(4, 0.1, "float32"))
        opt = fluid.optimizer.Adam(0.01, parameter_list=lin.parameters())
        x = fluid.dygraph.to_variable(np.linspace(0, 1, 24, dtype="float32").reshape(3, 8))
        placed = type(x.value())
        losses = []
        for _ in range(steps):
            loss = fluid.layers.mean(lin(x))
            loss.backward()
            opt.minimize(loss)
            lin.clear_gradients()
            losses.append(loss.numpy())
        grad_free = lin.weight.numpy()
    return placed, type(lin.weight.value()), losses, grad_free


def test_dygraph_values_live_on_the_guards_device_and_numpy_copies_back():
    placed, weight_type, losses, weight = _dygraph_steps(CHECKING)
    assert placed is CheckingArray and weight_type is CheckingArray
    assert all(type(v) is not CheckingArray for v in losses)  # .numpy() is a host array
    _, cpu_type, cpu_losses, cpu_weight = _dygraph_steps(fluid.CPUPlace())
    assert cpu_type is np.ndarray
    np.testing.assert_allclose(np.ravel(losses), np.ravel(cpu_losses), rtol=1e-6)
    np.testing.assert_allclose(weight, cpu_weight, rtol=1e-6)


def test_dygraph_shape_and_dtype_read_without_a_host_copy():
    with fluid.dygraph.guard(CHECKING):
        x = fluid.dygraph.to_variable(np.zeros((2, 5), "float32"))
        assert x.shape == [2, 5] and x.dtype == "float32"
        y = x * 2.0
        assert type(y.value()) is CheckingArray and y.shape == [2, 5]


def test_static_program_on_a_device_moves_host_scope_values_there_once():
    main, startup = fluid.Program(), fluid.Program()
    main.random_seed = startup.random_seed = 3
    with fluid.program_guard(main, startup):
        x = fluid.data("x", [None, 4], "float32")
        loss = fluid.layers.mean(fluid.layers.fc(x, 2))
        fluid.optimizer.SGD(0.1).minimize(loss)
    feed = {"x": np.arange(12, dtype="float32").reshape(3, 4) / 10}
    scope = fluid.Scope()
    fluid.Executor(fluid.CPUPlace()).run(startup, scope=scope)  # parameters made on the host
    w = main.global_block().all_parameters()[0].name
    start = np.array(scope.find_var(w).get_tensor())
    on_device = fluid.Executor(CHECKING)
    got = [on_device.run(main, feed=feed, fetch_list=[loss], scope=scope)[0] for _ in range(3)]
    assert type(scope.find_var(w).get_tensor()._array) is CheckingArray  # moved, and kept there

    cpu_scope = fluid.Scope()
    cpu = fluid.Executor(fluid.CPUPlace())
    cpu.run(startup, scope=cpu_scope)
    np.testing.assert_array_equal(np.array(cpu_scope.find_var(w).get_tensor()), start)
    want = [cpu.run(main, feed=feed, fetch_list=[loss], scope=cpu_scope)[0] for _ in range(3)]
    np.testing.assert_allclose(np.ravel(got), np.ravel(want), rtol=1e-6)
    assert not np.allclose(got[0], got[-1])  # it trained


def test_dygraph_gradients_and_learning_rate_stay_on_the_device():
    with fluid.dygraph.guard(CHECKING):
        lin = fluid.dygraph.Linear(4, 3)
        opt = fluid.optimizer.SGD(
            fluid.dygraph.ExponentialDecay(0.1, 10, 0.5), parameter_list=lin.parameters()
        )
        x = fluid.dygraph.to_variable(np.ones((2, 4), "float32"))
        x.stop_gradient = False
        loss = fluid.layers.mean(lin(x))
        (dx,) = fluid.dygraph.grad([loss], [x], retain_graph=True)
        assert type(dx.value()) is CheckingArray
        np.testing.assert_allclose(
            dx.numpy(), np.tile(lin.weight.numpy().sum(1) / 6, (2, 1)), rtol=1e-6
        )
        loss.backward()
        assert type(lin.weight._grad) is CheckingArray
        opt.minimize(loss)
        lr_var = opt._lr_vars.get(fluid.default_main_program())
        assert type(lr_var.value()) is CheckingArray
