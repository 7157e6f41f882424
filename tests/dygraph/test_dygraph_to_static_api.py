"""ProgramTranslator / declarative API: enable(False), the per-signature cache, get_code,
static-mode use, training through the program, saving an inference model, and clear errors."""

import inspect

import numpy as np
import pytest
from oar import fluid
from oar.errors import ShapeError
from oar.fluid.dygraph import Linear, ProgramTranslator, declarative, to_variable

CALLS = []


@pytest.fixture(autouse=True)
def _translator():
    ProgramTranslator.reset()
    CALLS.clear()
    yield
    ProgramTranslator.reset()


@declarative
def double_if_positive(x):
    CALLS.append(1)  # Python side effect: runs once per build, every call when eager
    if fluid.layers.reduce_sum(x) > 0:
        x = x * 2
    return x


def test_enable_false_runs_eagerly_and_builds_nothing():
    pt = ProgramTranslator()
    pt.enable(False)
    with fluid.dygraph.guard():
        x = to_variable(np.ones((2, 2), "float32"))
        for _ in range(3):
            out = double_if_positive(x)
    assert len(CALLS) == 3 and len(pt.get_program_cache()) == 0
    np.testing.assert_allclose(out.numpy(), 2.0)
    with pytest.raises(TypeError, match="bool"):
        pt.enable(1)


def test_second_call_with_the_same_signature_does_not_rebuild():
    pt = ProgramTranslator()
    with fluid.dygraph.guard():
        a = to_variable(np.ones((2, 2), "float32"))
        b = to_variable(-np.ones((2, 2), "float32"))
        np.testing.assert_allclose(double_if_positive(a).numpy(), 2.0)
        np.testing.assert_allclose(double_if_positive(b).numpy(), -1.0)  # same shape: reused
        assert len(CALLS) == 1 and pt.get_program_cache().builds == 1
        double_if_positive(to_variable(np.ones((3, 2), "float32")))  # new shape: new program
        assert len(CALLS) == 2 and pt.get_program_cache().builds == 2
        by_keyword = double_if_positive(x=b)  # a tensor passed by keyword is fed too
        np.testing.assert_allclose(by_keyword.numpy(), -1.0)
        assert len(CALLS) == 3


def test_get_code_shows_cond_and_while_loop_helpers():
    def loop(x):
        while fluid.layers.reduce_sum(x) < 10.0:
            x = x + 1
        return x

    pt = ProgramTranslator()
    code = pt.get_code(double_if_positive)
    assert "_jst.convert_ifelse(" in code and "def _jst_true_fn_0(x)" in code
    assert "_jst.convert_while_loop(" in pt.get_code(loop)
    assert pt.get_code(double_if_positive) == pt.get_code(double_if_positive.dygraph_function)


def test_get_output_get_func_and_static_mode_use():
    pt = ProgramTranslator()
    with fluid.dygraph.guard():
        out = pt.get_output(double_if_positive, to_variable(np.ones((1, 3), "float32")))
        np.testing.assert_allclose(out.numpy(), 2.0)
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data("x", [1, 3], "float32")
        y1 = double_if_positive(x)  # static mode: appends the converted ops
        y2 = pt.get_func(double_if_positive)(x)
        y3 = fluid.dygraph.dygraph_to_static_func(double_if_positive.dygraph_function)(x)
    exe = fluid.Executor(fluid.CPUPlace())
    res = exe.run(main, feed={"x": -np.ones((1, 3), "float32")}, fetch_list=[y1, y2, y3])
    for r in res:
        np.testing.assert_allclose(r, -1.0)


def test_signatures_match_fluid():
    assert list(inspect.signature(declarative).parameters) == ["func"]
    assert list(inspect.signature(fluid.dygraph.dygraph_to_static_func).parameters) == [
        "dygraph_func"
    ]
    pt = ProgramTranslator()
    assert pt is ProgramTranslator() is ProgramTranslator.get_instance()
    assert list(inspect.signature(pt.save_inference_model).parameters) == [
        "dirname",
        "feed",
        "fetch",
    ]
    assert fluid.dygraph.jit.declarative is declarative


class Regressor(fluid.dygraph.Layer):
    def __init__(self):
        super().__init__()
        self.hidden = Linear(3, 8, act="tanh")
        self.out = Linear(8, 1)

    @declarative
    def forward(self, x, y):
        h = self.hidden(x)
        if fluid.layers.reduce_mean(h) > 0.0:
            h = h * 0.5
        pred = self.out(h)
        return fluid.layers.reduce_mean(fluid.layers.square(pred - y)), pred


def _train(enabled, steps=12):
    pt = ProgramTranslator()
    pt.enable(enabled)
    losses = []
    with fluid.dygraph.guard():
        net = Regressor()
        for i, p in enumerate(net.parameters()):
            p.set_value(np.random.RandomState(i).uniform(-0.5, 0.5, p.shape).astype("float32"))
        opt = fluid.optimizer.Adam(0.05, parameter_list=net.parameters())
        rng = np.random.RandomState(0)
        for _ in range(steps):
            xb = rng.rand(4, 3).astype("float32")
            loss, _ = net(to_variable(xb), to_variable(xb.sum(1, keepdims=True)))
            loss.backward()
            opt.minimize(loss)
            net.clear_gradients()
            losses.append(float(loss.numpy()[0]))
        weights = [p.numpy() for p in net.parameters()]
    pt.enable(True)
    return losses, weights


def test_training_through_declarative_equals_eager_training():
    static_losses, static_w = _train(True)
    eager_losses, eager_w = _train(False)
    np.testing.assert_allclose(static_losses, eager_losses, rtol=1e-5, atol=1e-5)
    for a, b in zip(static_w, eager_w):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
    assert static_losses[-1] < static_losses[0]
    assert ProgramTranslator().get_program_cache().builds == 1  # one program for all steps


def test_save_inference_model_loads_with_fluid_io_and_the_predictor(tmp_path):
    pt = ProgramTranslator()
    x0 = np.random.RandomState(1).rand(2, 3).astype("float32")
    with fluid.dygraph.guard():
        net = Regressor()
        net.eval()
        _, pred = net(to_variable(x0), to_variable(np.zeros((2, 1), "float32")))
        pt.save_inference_model(str(tmp_path), feed=[0], fetch=[1])
    exe = fluid.Executor(fluid.CPUPlace())
    prog, feeds, fetches = fluid.io.load_inference_model(str(tmp_path), exe)
    assert len(feeds) == 1 and len(fetches) == 1
    (got,) = exe.run(prog, feed={feeds[0]: x0}, fetch_list=fetches)
    np.testing.assert_allclose(got, pred.numpy(), rtol=1e-6)
    config = fluid.core.AnalysisConfig(str(tmp_path))
    config.disable_gpu()
    predictor = fluid.core.create_paddle_predictor(config)
    (out,) = predictor.run([fluid.core.PaddleTensor(x0)])
    np.testing.assert_allclose(np.asarray(out.as_ndarray()), pred.numpy(), rtol=1e-6)


@declarative
def returns_inside_a_loop(x):
    while fluid.layers.reduce_sum(x) < 10.0:
        x = x + 1
        if fluid.layers.reduce_sum(x) > 5.0:
            return x  # unsupported: return inside a loop
    return x


@declarative
def bad_matmul(x):
    if fluid.layers.reduce_sum(x) > 0:
        y = fluid.layers.matmul(x, x)  # [2, 3] @ [2, 3]
    else:
        y = x
    return y


def _line_of(func, text):
    lines, first = inspect.getsourcelines(func.dygraph_function)
    return first + next(i for i, line in enumerate(lines) if text in line)


def test_unsupported_construct_names_the_function_and_the_user_line():
    from oar.dygraph.dygraph_to_static import ConversionError

    with fluid.dygraph.guard():
        x = to_variable(np.ones((2, 3), "float32"))
        with pytest.raises(ConversionError) as info:
            returns_inside_a_loop(x)
    msg = str(info.value)
    assert "returns_inside_a_loop" in msg and "`return` inside a loop" in msg
    assert f"{__file__}:{_line_of(returns_inside_a_loop, 'return x  # unsupported')}" in msg


def test_error_in_converted_code_points_at_the_original_line():
    with fluid.dygraph.guard():
        x = to_variable(np.ones((2, 3), "float32"))
        with pytest.raises(ShapeError) as info:
            bad_matmul(x)
    msg = str(info.value)
    assert "matmul" in msg
    assert f"{__file__}:{_line_of(bad_matmul, 'y = fluid.layers.matmul')}" in msg


def test_variable_changed_in_a_tensor_branch_to_a_python_object_is_refused():
    @declarative
    def mixed(x):
        y = [1]
        if fluid.layers.reduce_sum(x) > 0:
            y = [2]
        return x, y

    with fluid.dygraph.guard():
        with pytest.raises(ValueError, match="variable 'y'"):
            mixed(to_variable(np.ones((1, 2), "float32")))


def test_traced_layer_still_works_for_code_without_data_dependent_control_flow():
    with fluid.dygraph.guard():
        layer = Linear(3, 2)
        x = to_variable(np.ones((1, 3), "float32"))
        out, traced = fluid.dygraph.TracedLayer.trace(layer, [x])
        (res,) = traced([x])
    np.testing.assert_allclose(res, out.numpy(), rtol=1e-6)
