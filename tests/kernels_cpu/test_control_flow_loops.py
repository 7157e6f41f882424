"""Gradients through loops whose state starts from a variable that stops gradients (a data
variable, a constant memory), in while_loop, StaticRNN and DynamicRNN."""

import numpy as np
import pytest
from oar import fluid

layers = fluid.layers


def _loop_over_data(copy, wrt_x):
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        x = fluid.data("x", [2, 3], "float32")
        x.stop_gradient = not wrt_x
        i = layers.fill_constant([1], "int64", 0)
        three = layers.fill_constant([1], "int64", 3)
        w = layers.create_parameter(
            [3, 3], "float32", default_initializer=fluid.initializer.Constant(0.2)
        )
        h0 = layers.scale(x, 1.0) if copy else x
        _, h = layers.while_loop(
            lambda i, h: i < three, lambda i, h: [i + 1, layers.tanh(layers.matmul(h, w))], [i, h0]
        )
        loss = layers.reduce_sum(layers.square(h))
        grads = fluid.gradients(loss, [w, x] if wrt_x else [w])
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(start, scope=scope)
    xv = np.random.RandomState(2).rand(2, 3).astype("float32")
    return exe.run(main, {"x": xv}, fetch_list=[h, x] + grads, scope=scope), xv


@pytest.mark.parametrize("wrt_x", [False, True])
def test_while_loop_over_a_data_variable_has_gradients(wrt_x):
    got, xv = _loop_over_data(copy=False, wrt_x=wrt_x)
    want, _ = _loop_over_data(copy=True, wrt_x=wrt_x)
    if not wrt_x:  # a stop_gradient loop variable starts from a copy: it keeps its value
        np.testing.assert_array_equal(got[1], xv)
    assert np.abs(got[2]).sum() > 0
    for g, w in zip(got[:1] + got[2:], want[:1] + want[2:]):  # h and the gradients
        np.testing.assert_allclose(g, w, rtol=1e-6)


def _static_rnn(from_shape, place=None):
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        x = fluid.data("x", [4, 2, 3], "float32")
        zeros = layers.fill_constant([2, 3], "float32", 0.0)
        rnn = layers.StaticRNN()
        with rnn.step():
            xt = rnn.step_input(x)
            if from_shape:  # a constant start made by the memory itself
                mem = rnn.memory(shape=[-1, 3], batch_ref=xt)
            else:
                mem = rnn.memory(init=zeros)
            h = layers.tanh(
                layers.fc(layers.concat([xt, mem], 1), 3, param_attr=fluid.ParamAttr(name="w"))
            )
            rnn.update_memory(mem, h)
            rnn.step_output(h)
        loss = layers.reduce_sum(layers.square(rnn()))
        grads = fluid.gradients(loss, [main.global_block().var("w"), x])
    exe = fluid.Executor(place or fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(start, scope=scope)
    w = np.random.RandomState(1).uniform(-0.5, 0.5, (6, 3)).astype("float32")
    scope.find_var("w").get_tensor().set(w, place or fluid.CPUPlace())
    xv = np.random.RandomState(2).rand(4, 2, 3).astype("float32")
    return exe.run(main, {"x": xv}, fetch_list=grads, scope=scope)


def test_static_rnn_memory_from_a_shape_carries_gradients_through_time():
    with fluid.unique_name.guard():
        got = _static_rnn(from_shape=True)
    with fluid.unique_name.guard():
        want = _static_rnn(from_shape=False)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6)


def test_loop_gradients_run_on_another_device():
    """The host ops of loops and tensor arrays (and their gradients) run on the suite's checking
    device (its own array type, kernels registered as a GPU plugin registers them) with the
    CPU's numbers."""
    from oar.testing import device_places

    checking = [p for p in device_places() if p.device == "checking"]
    if not checking:
        pytest.skip("the checking device is registered by tests/kernels_cpu/conftest.py")
    with fluid.unique_name.guard():
        got = _static_rnn(from_shape=False, place=checking[0])
    with fluid.unique_name.guard():
        want = _static_rnn(from_shape=False)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6)


def test_a_memory_initialised_inside_the_step_block_is_a_clear_error():
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        x = fluid.data("x", [4, 2, 3], "float32")
        rnn = layers.StaticRNN()
        with pytest.raises(ValueError) as info:
            with rnn.step():
                rnn.step_input(x)
                rnn.memory(init=layers.fill_constant([2, 3], "float32", 0.0))
    msg = str(info.value)
    assert "StaticRNN" in msg and "before the step block" in msg and "fill_constant" in msg
    assert "test_control_flow_loops.py" in msg
