"""FLAGS_check_nan_inf: the first op producing NaN/Inf is named, in static graph and dygraph."""

from __future__ import annotations

import numpy as np
import pytest
from oar import flags as oar_flags
from oar import fluid
from oar.executor.checked_plan import CheckedPlan
from oar.executor.plan import Plan
from oar.nan_inf import NanInfError

# the kernels' own numpy warnings about the NaN/Inf these tests make on purpose
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


@pytest.fixture
def check_on():
    fluid.set_flags({"FLAGS_check_nan_inf": True})
    yield
    fluid.set_flags({"FLAGS_check_nan_inf": False})


def _log_net():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        x = fluid.layers.data("x", shape=[2], dtype="float32")
        y = fluid.layers.log(x)  # the line to report
        z = fluid.layers.scale(y, 2.0)
    return main, y, z


def test_static_graph_names_the_first_bad_op_its_output_and_the_line(check_on):
    main, y, z = _log_net()
    exe = fluid.Executor(fluid.CPUPlace())
    with pytest.raises(NanInfError) as info:
        exe.run(main, feed={"x": np.array([[-1.0, 1.0]], "float32")}, fetch_list=[z])
    msg = str(info.value)
    assert "op 'log'" in msg and f"'{y.name}'" in msg and "1 NaN and 0 Inf" in msg
    assert "test_nan_inf.py" in msg and "the line to report" in msg
    assert info.value.op == "log" and info.value.variable == y.name
    # finite values pass through the checked plan unchanged
    got = exe.run(main, feed={"x": np.array([[1.0, np.e]], "float32")}, fetch_list=[z])[0]
    np.testing.assert_allclose(got, [[0.0, 2.0]], atol=1e-6)


def test_a_nan_fed_into_training_stops_at_the_first_op(check_on):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        x = fluid.layers.data("x", shape=[3], dtype="float32")
        h = fluid.layers.fc(x, 4)
        loss = fluid.layers.mean(h)
        fluid.optimizer.SGD(0.1).minimize(loss)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    xs = np.ones((2, 3), "float32")
    xs[0, 1] = np.nan
    with pytest.raises(NanInfError, match="op 'mul'"):
        exe.run(main, feed={"x": xs}, fetch_list=[loss], scope=scope)
    w = scope.find_var(main.all_parameters()[0].name).get_tensor()
    assert np.isfinite(np.array(w)).all()  # stopped before the update


def test_inf_is_caught_too(check_on):
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        x = fluid.layers.data("x", shape=[1], dtype="float32")
        y = fluid.layers.exp(x)
    with pytest.raises(
        NanInfError, match=r"0 NaN and 1 Inf among 2 values \(first at flat index 1\)"
    ):
        fluid.Executor().run(
            main, feed={"x": np.array([[0.0], [1000.0]], "float32")}, fetch_list=[y]
        )


def test_flag_off_builds_the_plain_plan_and_switching_rebuilds():
    main, y, z = _log_net()
    exe = fluid.Executor(fluid.CPUPlace())
    bad = {"x": np.array([[-1.0, 1.0]], "float32")}
    got = exe.run(main, feed=bad, fetch_list=[z])[0]  # off: silent, as in Fluid
    assert np.isnan(got[0, 0])
    key = (id(main), ("x",), (z.name,))
    plain = exe._plans[key][1]
    assert type(plain) is Plan and not plain.has_lod_ops
    assert [s.call for s in plain.steps] == [
        s.call for s in Plan(main, ("x",), (z.name,), exe.device).steps
    ]
    assert len(plain.steps) == len(main.global_block().ops)  # no check ops added
    fluid.set_flags({"FLAGS_check_nan_inf": True})
    try:
        with pytest.raises(NanInfError):
            exe.run(main, feed=bad, fetch_list=[z])
        assert type(exe._plans[key][1]) is CheckedPlan
    finally:
        fluid.set_flags({"FLAGS_check_nan_inf": False})
    exe.run(main, feed=bad, fetch_list=[z])
    assert type(exe._plans[key][1]) is Plan
    assert oar_flags.CHECK_NAN_INF is False


def test_dygraph_names_the_op_the_variable_and_the_line(check_on):
    with pytest.raises(NanInfError) as info:
        with fluid.dygraph.guard():
            x = fluid.dygraph.to_variable(np.array([[-1.0, 4.0]], "float32"))
            fluid.layers.sqrt(x)  # the dygraph line
    msg = str(info.value)
    assert "op 'sqrt'" in msg and "the dygraph line" in msg and "test_nan_inf.py" in msg
    assert info.value.variable  # the output variable's name
    assert f"'{info.value.variable}'" in msg


def test_dygraph_operators_and_backward_are_checked(check_on):
    with fluid.dygraph.guard():
        x = fluid.dygraph.to_variable(np.array([[0.0, 1.0]], "float32"))
        with pytest.raises(NanInfError, match="op 'elementwise_div'"):
            _ = x / x  # 0/0
        x.stop_gradient = False
        y = fluid.layers.sqrt(x)  # finite: sqrt(0) = 0
        loss = fluid.layers.reduce_sum(y)
        with pytest.raises(NanInfError, match="op 'sqrt_grad'.*a gradient"):
            loss.backward()  # d sqrt(x)/dx at 0 is inf


def test_dygraph_runs_unchecked_when_the_flag_is_off():
    from oar.dygraph.tracer import Tracer
    from oar.nan_inf import _CHECKED

    assert all(Tracer.__dict__[name] is not fn for name, fn in _CHECKED.items())
    with fluid.dygraph.guard():
        x = fluid.dygraph.to_variable(np.array([[-1.0]], "float32"))
        assert np.isnan(fluid.layers.sqrt(x).numpy()).all()


def test_the_environment_variable_turns_checks_on_in_both_modes():
    import os
    import subprocess
    import sys

    code = """
import numpy as np, warnings
warnings.simplefilter("ignore")
from oar import fluid
from oar.nan_inf import NanInfError
main = fluid.Program()
with fluid.program_guard(main, fluid.Program()):
    x = fluid.layers.data("x", shape=[1], dtype="float32")
    y = fluid.layers.log(x)
try:
    fluid.Executor().run(main, feed={"x": np.array([[-1.0]], "float32")}, fetch_list=[y])
except NanInfError as e:
    print("static", e.op)
with fluid.dygraph.guard():
    try:
        fluid.layers.sqrt(fluid.dygraph.to_variable(np.array([-1.0], "float32")))
    except NanInfError as e:
        print("dygraph", e.op)
"""
    env = dict(os.environ, FLAGS_check_nan_inf="true")
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["static", "log", "dygraph", "sqrt"]
