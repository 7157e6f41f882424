"""The program IR: Program/Block/Variable/Operator, printing, serialization, clone,
unique_name and ParamAttr (incl. name-based parameter sharing)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from oar import fluid
from oar.framework.operator import OpRole
from oar.framework.program import Program
from oar.framework.variable import Parameter, Variable
from oar.initializer import Constant


def build_regression(seed: int = 5):
    """The seed's linear regression net, with SGD, in fresh programs."""
    main, startup = fluid.Program(), fluid.Program()
    startup.random_seed = seed
    main.random_seed = seed
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        x = fluid.layers.data(name="x", shape=[4], dtype="float32")
        y = fluid.layers.data(name="y", shape=[1], dtype="float32")
        pred = fluid.layers.fc(input=x, size=1, act=None)
        cost = fluid.layers.square_error_cost(input=pred, label=y)
        avg = fluid.layers.mean(cost)
        fluid.optimizer.SGD(learning_rate=0.05).minimize(avg)
    return main, startup, pred, avg


FEED = {
    "x": np.arange(12, dtype="float32").reshape(3, 4) / 10,
    "y": np.array([[1], [2], [3]], "float32"),
}


def train(main, startup, fetch, steps=3):
    scope = fluid.Scope()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup, scope=scope)
    return [exe.run(main, feed=FEED, fetch_list=fetch, scope=scope) for _ in range(steps)]


# --- structure --------------------------------------------------------------------------------


def test_program_blocks_vars_ops():
    main, startup, pred, avg = build_regression()
    block = main.global_block()
    assert main.block(0) is block and main.current_block() is block and main.num_blocks == 1
    assert isinstance(pred, Variable) and pred.block is block
    assert block.var("x").shape == (-1, 4) and block.var("x").dtype == "float32"
    assert block.has_var("fc_0.w_0") and not block.has_var("nope")
    with pytest.raises(ValueError, match="'nope' is not in block 0"):
        block.var("nope")
    names = {v.name for v in main.list_vars()}
    assert {"x", "y", "fc_0.w_0", "fc_0.b_0", avg.name} <= names
    params = main.all_parameters()
    assert sorted(p.name for p in params) == ["fc_0.b_0", "fc_0.w_0"]
    assert all(isinstance(p, Parameter) and p.persistable and p.trainable for p in params)
    assert [p.shape for p in sorted(params, key=lambda p: p.name)] == [(1,), (4, 1)]
    types = [op.type for op in block.ops]
    assert types[:4] == ["mul", "elementwise_add", "elementwise_sub", "square"]
    assert "mean" in types and "mean_grad" in types and types.count("sgd") == 2


def test_operator_api():
    main, _, pred, _ = build_regression()
    mul = main.global_block().ops[0]
    assert mul.type == "mul"
    assert mul.input("X") == ["x"] and mul.input("Y") == ["fc_0.w_0"]
    assert mul.input_names == ["X", "Y"] and mul.output_names == ["Out"]
    assert set(mul.input_arg_names) == {"x", "fc_0.w_0"}
    assert mul.attr("x_num_col_dims") == 1 and mul.has_attr("y_num_col_dims")
    assert "x_num_col_dims" in mul.attr_names
    assert mul.attr("op_role") == OpRole.Forward
    sgd = [op for op in main.global_block().ops if op.type == "sgd"][0]
    assert sgd.attr("op_role") == OpRole.Optimize
    assert sgd.output("ParamOut") == sgd.input("Param")  # in place
    grad_ops = [op for op in main.global_block().ops if op.type.endswith("_grad")]
    assert grad_ops and all(op.attr("op_role") == OpRole.Backward for op in grad_ops)
    # the op remembers the user's line that built it
    assert "test_ir.py" in mul.callsite[0]


def test_str_program_is_readable():
    main, startup, _, _ = build_regression()
    text = str(main)
    assert text.startswith("block { idx: 0, parent: -1")
    assert "parameter persistable fc_0.w_0" in text and "shape=[4, 1], dtype=float32" in text
    assert "mul" in text and "sgd" in text
    assert "fill_constant" in str(startup) or "uniform_random" in str(startup)


def test_random_seed():
    p = Program()
    assert p.random_seed == 0
    v = p._version
    p.random_seed = 7
    assert p.random_seed == 7 and p._version > v
    with pytest.raises(TypeError, match="random_seed must be an int"):
        p.random_seed = "7"


def test_default_programs_and_guard():
    main, startup = Program(), Program()
    before = fluid.default_main_program()
    with fluid.program_guard(main, startup):
        assert fluid.default_main_program() is main and fluid.default_startup_program() is startup
        fluid.layers.data("a", shape=[2])
    assert fluid.default_main_program() is before
    assert main.global_block().has_var("a") and not before.global_block().has_var("a")
    with pytest.raises(TypeError, match="main_program must be a Program"):
        with fluid.program_guard("not a program"):
            pass


# --- serialization ------------------------------------------------------------------------------


def test_dict_round_trip_is_exact_and_json_able():
    main, startup, _, _ = build_regression()
    for prog in (main, startup):
        d = prog.to_dict()
        assert d["format"] == "oar.program" and d["version"] == 1
        restored = Program.from_dict(json.loads(json.dumps(d)))
        assert restored.to_dict() == d
    restored = Program.from_dict(json.loads(json.dumps(main.to_dict())))
    w = restored.global_block().var("fc_0.w_0")
    assert isinstance(w, Parameter) and w.trainable and w.optimize_attr == {"learning_rate": 1.0}


def test_restored_program_computes_the_same():
    main, startup, pred, avg = build_regression()
    rmain = Program.from_dict(json.loads(json.dumps(main.to_dict())))
    rstartup = Program.from_dict(json.loads(json.dumps(startup.to_dict())))
    a = train(main, startup, [pred.name, avg.name])
    b = train(rmain, rstartup, [pred.name, avg.name])
    for (pa, la), (pb, lb) in zip(a, b):
        np.testing.assert_array_equal(pa, pb)
        np.testing.assert_array_equal(la, lb)
    assert a[-1][1][0] < a[0][1][0]  # it trained


def test_from_dict_refuses_foreign_or_newer_descriptions():
    d = Program().to_dict()
    with pytest.raises(ValueError, match="not an oar program"):
        Program.from_dict({**d, "format": "paddle"})
    with pytest.raises(ValueError, match="version 99 is not supported"):
        Program.from_dict({**d, "version": 99})


def test_clone_copies_and_for_test_drops_training_ops():
    main, startup, pred, avg = build_regression()
    with fluid.program_guard(main, startup):
        sm = fluid.layers.softmax(pred)
    same = main.clone()
    assert same.to_dict() == main.to_dict()
    assert same.global_block() is not main.global_block()
    test = main.clone(for_test=True)
    types = [op.type for op in test.global_block().ops]
    assert "sgd" not in types and not any(t.endswith("_grad") for t in types)
    assert types[:4] == ["mul", "elementwise_add", "elementwise_sub", "square"]
    softmax = [op for op in test.global_block().ops if op.type == "softmax"][0]
    assert softmax.attr("is_test") is True
    assert [op for op in main.global_block().ops if op.type == "softmax"][0].attr(
        "is_test"
    ) is False
    # running the test program reads the trained parameters and leaves them alone
    scope = fluid.Scope()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup, scope=scope)
    w0 = np.array(scope.find_var("fc_0.w_0").get_tensor()).copy()
    (out,) = exe.run(test, feed=FEED, fetch_list=[sm.name], scope=scope)
    np.testing.assert_array_equal(np.array(scope.find_var("fc_0.w_0").get_tensor()), w0)
    assert out.shape == (3, 1)


# --- unique_name --------------------------------------------------------------------------------


def test_unique_name_generate_and_guard():
    with fluid.unique_name.guard():
        assert fluid.unique_name.generate("fc") == "fc_0"
        assert fluid.unique_name.generate("fc") == "fc_1"
        assert fluid.unique_name.generate("conv") == "conv_0"
        with fluid.unique_name.guard():
            assert fluid.unique_name.generate("fc") == "fc_0"
        assert fluid.unique_name.generate("fc") == "fc_2"
    with fluid.unique_name.guard("pre_"):
        assert fluid.unique_name.generate("fc") == "pre_fc_0"


def test_same_builder_under_guard_gives_the_same_parameter_names():
    def names():
        with fluid.program_guard(Program(), Program()), fluid.unique_name.guard():
            x = fluid.layers.data("x", shape=[3])
            fluid.layers.fc(fluid.layers.fc(x, 4), 2)
            return [p.name for p in fluid.default_main_program().all_parameters()]

    a, b = names(), names()
    assert a == b == ["fc_0.w_0", "fc_0.b_0", "fc_1.w_0", "fc_1.b_0"]


# --- ParamAttr ---------------------------------------------------------------------------------


def test_param_attr_coercion():
    to = fluid.ParamAttr._to_attr
    assert to(None) == fluid.ParamAttr()
    assert to("w").name == "w"
    init = Constant(0.5)
    assert to(init).initializer is init
    assert to(True) == fluid.ParamAttr()
    assert to(False) is False
    attr = fluid.ParamAttr(name="q", learning_rate=0.1)
    assert to(attr) is attr
    assert [a.name for a in to(["a", None])] == ["a", None]
    with pytest.raises(TypeError, match="param_attr/bias_attr must be"):
        to(3.5)
    with pytest.raises(TypeError, match="name must be a str"):
        fluid.ParamAttr(name=3)


def test_param_attr_in_fc():
    with fluid.program_guard(Program(), Program()), fluid.unique_name.guard():
        x = fluid.layers.data("x", shape=[3])
        fluid.layers.fc(x, 2, param_attr="my_w", bias_attr=False)
        fluid.layers.fc(
            x, 2, param_attr=Constant(0.25), bias_attr=fluid.ParamAttr(name="my_b", trainable=False)
        )
        params = {p.name: p for p in fluid.default_main_program().all_parameters()}
    assert sorted(params) == ["fc_1.w_0", "my_b", "my_w"]
    assert params["my_b"].trainable is False and params["my_b"].stop_gradient is True


def test_parameters_shared_by_name():
    main, startup = Program(), Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        a = fluid.layers.data("a", shape=[3])
        b = fluid.layers.data("b", shape=[3])
        shared = fluid.ParamAttr(name="shared_w", initializer=Constant(0.5))
        oa = fluid.layers.fc(a, 2, param_attr=shared, bias_attr=False)
        ob = fluid.layers.fc(b, 2, param_attr=shared, bias_attr=False)
    assert [p.name for p in main.all_parameters()] == ["shared_w"]
    init_ops = [op for op in startup.global_block().ops if "shared_w" in op.output_arg_names]
    assert len(init_ops) == 1
    scope = fluid.Scope()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup, scope=scope)
    x = np.ones((1, 3), "float32")
    ra, rb = exe.run(main, feed={"a": x, "b": x}, fetch_list=[oa, ob], scope=scope)
    np.testing.assert_array_equal(ra, rb)
    np.testing.assert_allclose(ra, [[1.5, 1.5]])


def test_sharing_a_parameter_with_a_different_shape_fails():
    with fluid.program_guard(Program(), Program()), fluid.unique_name.guard():
        x = fluid.layers.data("x", shape=[3])
        fluid.layers.fc(x, 2, param_attr="shared_w")
        with pytest.raises(
            ValueError, match="'shared_w' is shared by name.*shape \\[3, 4\\].*\\[3, 2\\]"
        ):
            fluid.layers.fc(x, 4, param_attr="shared_w")


def test_no_layer_function_is_shadowed_by_a_submodule():
    """A submodule named like a layer (oar.layers.shape vs fluid.layers.shape) must not replace it."""
    import sys
    import types

    from oar import fluid

    for modname, mod in list(sys.modules.items()):
        if not modname.startswith("oar.layers.") or not isinstance(mod, types.ModuleType):
            continue
        for name in getattr(mod, "__all__", ()):
            assert not isinstance(getattr(fluid.layers, name), types.ModuleType), (
                f"fluid.layers.{name} is a module"
            )
