"""Fluid-era scalar idioms on what oar hands back to user code, on every supported NumPy
(docs/numpy2.md): ``float(loss)``, ``int(count)``, ``"%f" % loss``,
``math.isnan(loss)`` on Executor / CompiledProgram / ParallelExecutor fetches, LoDTensor
arrays and dygraph ``.numpy()``/``.gradient()``, in static graph and dygraph. On NumPy 2.4
each of these raises TypeError for a plain shape-[1] array."""

# ruff: noqa: UP031  (printf-style formatting is the idiom under test)

from __future__ import annotations

import math
import operator
import warnings

import numpy as np
import pytest
from oar import fluid
from oar.user_array import UserArray, user_array

# Each Fluid-era idiom, with what NumPy 1.x gave for a size-1 array: the same as for its element.
IDIOMS = {
    "float(x)": float,
    "int(x)": int,
    "complex(x)": complex,
    '"%f" % x': lambda x: "%f" % x,
    '"%.4f" % x': lambda x: "%.4f" % x,
    '"%d" % x': lambda x: "%d" % x,
    '"%e" % x': lambda x: "%e" % x,
    '"%g" % x': lambda x: "%g" % x,
    "math.isnan(x)": math.isnan,
    "math.isinf(x)": math.isinf,
    "math.exp(x)": math.exp,
}


def check_idioms(value: np.ndarray) -> None:
    """Every idiom works on ``value`` (no warning either: NumPy 1.25-2.3 deprecate them for
    plain arrays) and gives what it gives on the element itself."""
    assert value.size == 1
    element = np.asarray(value).reshape(()).item()
    for name, idiom in IDIOMS.items():
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = idiom(value)
        want = idiom(element)
        assert got == want or (got != got and want != want), (name, got, want)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "bool"])
@pytest.mark.parametrize("shape", [(1,), (1, 1), (1, 1, 1), ()])
def test_the_idioms_on_every_size_1_shape_and_dtype(dtype, shape):
    check_idioms(user_array(np.full(shape, 3, dtype=dtype)))


# --- static graph ---------------------------------------------------------------------------------
X = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]], "float32")
Y = np.array([[1.0], [2.0]], "float32")
LABEL = np.array([[3], [4]], "int64")


def regression():
    """The seeds' fit_a_line shape of program, plus an int64 count."""
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.data("x", shape=[3], dtype="float32")
        y = fluid.layers.data("y", shape=[1], dtype="float32")
        label = fluid.layers.data("label", shape=[1], dtype="int64")
        pred = fluid.layers.fc(x, 1, param_attr=fluid.initializer.Constant(0.1))
        avg_cost = fluid.layers.mean(fluid.layers.square_error_cost(pred, y))
        count = fluid.layers.reduce_sum(label)
        fluid.optimizer.SGD(0.01).minimize(avg_cost)
    return main, startup, pred, avg_cost, count


FEED = {"x": X, "y": Y, "label": LABEL}


def test_executor_fetches_support_the_idioms_on_every_run():
    main, startup, pred, avg_cost, count = regression()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    bias = main.global_block().all_parameters()[-1]
    assert bias.shape == (1,) or list(bias.shape) == [1]
    for _ in range(3):  # the first run compiles the plan; later runs take the cached fast path
        loss, n, p, b = exe.run(main, feed=FEED, fetch_list=[avg_cost, count, pred, bias])
        assert loss.shape == (1,) and n.shape == (1,)  # Fluid's shapes, unchanged
        check_idioms(loss)
        check_idioms(n)  # an int64 result
        check_idioms(b)  # a persistable (copied at fetch)
        assert int(n) == 7 and "%d" % n == "7"
        assert type(p) is np.ndarray  # more than one element: a plain ndarray, as before
    with pytest.raises(TypeError):  # NumPy 1.x refused this for shape [1] too
        operator.index(n)


def test_a_training_loop_in_fluid_style():
    main, startup, pred, avg_cost, count = regression()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    lines, total = [], 0.0
    for step in range(5):
        (loss,) = exe.run(main, feed=FEED, fetch_list=[avg_cost])
        if math.isnan(loss):
            raise AssertionError("nan loss")
        total += float(loss)
        lines.append("step %d, loss %f" % (step, loss))
    assert len(lines) == 5 and lines[0].startswith("step 0, loss ")
    assert total > 0 and float(loss) < float(lines[0].split()[-1])  # it learns


def test_return_numpy_false_gives_lod_tensors_whose_numpy_supports_the_idioms():
    main, startup, pred, avg_cost, count = regression()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    (t,) = exe.run(main, feed=FEED, fetch_list=[avg_cost], return_numpy=False)
    assert isinstance(t, fluid.LoDTensor)
    check_idioms(t.numpy())
    # np.array(t) is always a plain ndarray (NumPy's rule for np.array: docs/numpy2.md);
    # its value is the same
    assert type(np.array(t)) is np.ndarray
    assert np.array(t)[0] == t.numpy()[0]


def test_a_fetched_value_fed_back_runs_as_a_plain_array():
    main, startup, pred, avg_cost, count = regression()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    test_prog = main.clone(for_test=True)
    (p,) = exe.run(test_prog, feed={"x": X[:1], "y": Y[:1], "label": LABEL[:1]}, fetch_list=[pred])
    assert type(p) is UserArray  # a [1, 1] prediction
    out = exe.run(test_prog, feed={"x": X[:1], "y": p, "label": LABEL[:1]}, fetch_list=[avg_cost])
    assert float(out[0]) == 0.0


def test_compiled_program_and_parallel_executor_fetches(monkeypatch):
    monkeypatch.setenv("CPU_NUM", "1")
    main, startup, pred, avg_cost, count = regression()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    compiled = fluid.CompiledProgram(main).with_data_parallel(
        loss_name=avg_cost.name, places=fluid.cpu_places(1)
    )
    (loss,) = exe.run(compiled, feed=FEED, fetch_list=[avg_cost])
    check_idioms(loss)
    pe = fluid.ParallelExecutor(use_cuda=False, loss_name=avg_cost.name, main_program=main)
    loss, n = pe.run(fetch_list=[avg_cost.name, count.name], feed=FEED)
    check_idioms(loss)
    check_idioms(n)


def test_data_parallel_fetches_on_two_places():
    pytest.importorskip("oar_dist")
    main, startup, pred, avg_cost, count = regression()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    compiled = fluid.CompiledProgram(main).with_data_parallel(
        loss_name=avg_cost.name, places=fluid.cpu_places(2)
    )
    (merged,) = exe.run(compiled, feed=FEED, fetch_list=[avg_cost])
    assert merged.shape == (2,) and type(merged) is np.ndarray  # one loss per place (Fluid)
    check_idioms(np.mean(merged))
    (per_place,) = exe.run(compiled, feed=FEED, fetch_list=[avg_cost], return_merged=False)
    assert len(per_place) == 2
    for loss in per_place:
        check_idioms(loss)


# --- dygraph ----------------------------------------------------------------------------------------
def test_dygraph_numpy_gradient_and_variables_support_the_idioms():
    with fluid.dygraph.guard():
        fc = fluid.dygraph.Linear(3, 1, param_attr=fluid.initializer.Constant(0.1))
        x = fluid.dygraph.to_variable(X)
        y = fluid.dygraph.to_variable(Y)
        loss = fluid.layers.mean(fluid.layers.square_error_cost(fc(x), y))
        loss.backward()
        check_idioms(loss.numpy())
        check_idioms(fc.bias.gradient())  # a [1] parameter's gradient
        check_idioms(fc.bias.numpy())
        assert float(loss) == float(loss.numpy())  # the variable itself converts too
        count = fluid.layers.reduce_sum(fluid.dygraph.to_variable(LABEL))
        check_idioms(count.numpy())
        assert int(count.numpy()) == 7
        assert type(fc.weight.numpy()) is np.ndarray  # more than one element: plain


def test_values_from_numpy_become_plain_arrays_in_new_variables():
    with fluid.dygraph.guard():
        loss = fluid.layers.mean(fluid.dygraph.to_variable(Y))
        for zero_copy in (False, True):
            v = fluid.dygraph.to_variable(loss.numpy(), zero_copy=zero_copy)
            assert type(v.value()) is np.ndarray
            assert float(v) == 1.5


def test_dygraph_loader_batches_support_the_idioms():
    pytest.importorskip("oar_data")

    def one_sample():
        yield (np.array([2.5], "float32"),)

    with fluid.dygraph.guard():
        loader = fluid.io.DataLoader.from_generator(capacity=2, return_list=True)
        loader.set_sample_generator(one_sample, batch_size=1, places=fluid.CPUPlace())
        ((value,),) = list(loader())
        check_idioms(value.numpy())
        assert float(value) == 2.5
