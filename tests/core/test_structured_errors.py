"""Errors carry their context as fields (op, layer, variable, callsite) and render them."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from oar import fluid
from oar.errors import ArgumentError, DtypeError, OarError, ShapeError

THIS = "test_structured_errors.py"


def _static():
    main, startup = fluid.Program(), fluid.Program()
    return fluid.program_guard(main, startup), fluid.unique_name.guard()


def test_an_op_error_inside_a_layer_has_op_layer_and_the_op_callsite():
    g, u = _static()
    with g, u:
        x = fluid.data("x", [-1, 3], "float32")
        with pytest.raises(ShapeError) as info:
            fluid.layers.fc(x, size=2, num_flatten_dims=2)
    e = info.value
    assert e.layer == "fc" and e.callsite is not None and e.callsite[0].endswith(THIS)
    assert str(e).startswith("fc: ")


def test_a_shape_inference_error_names_the_op_in_its_field():
    g, u = _static()
    with g, u:
        a = fluid.data("a", [-1, 3], "float32")
        b = fluid.data("b", [-1, 4], "float32")
        with pytest.raises(ShapeError) as info:
            fluid.layers.elementwise_add(a, b)
    e = info.value
    assert e.op == "elementwise_add" and e.created and e.callsite[0].endswith(THIS)
    msg = str(e)
    assert msg.startswith("op 'elementwise_add': ") and msg.count("created at") == 1
    assert "op 'elementwise_add'" not in e.args[0]  # the op is a field, not baked into the text


def test_a_layer_argument_error_is_an_argument_error_of_that_layer():
    g, u = _static()
    with g, u:
        x = fluid.data("x", [-1, 3, 8, 8], "float32")
        with pytest.raises(ValueError) as info:
            fluid.layers.conv2d(x, 4, 3, groups=2)
    e = info.value
    assert isinstance(e, OarError) and e.layer == "conv2d" and e.callsite[0].endswith(THIS)
    assert str(e).startswith("conv2d: ") and "called at" in str(e)


def test_a_nested_layer_error_names_the_layer_the_user_called():
    g, u = _static()
    with g, u:
        with pytest.raises(TypeError) as info:
            fluid.layers.ones([2], "floaty")
    e = info.value
    assert e.entry == "ones" and e.layer == "fill_constant"
    assert str(e).startswith("ones: fill_constant: unsupported dtype 'floaty'")


def test_plain_python_errors_become_argument_errors_chained_to_the_original():
    g, u = _static()
    with g, u:
        x = fluid.data("x", [-1, 3], "float32")
        with pytest.raises(ValueError) as info:
            fluid.layers.scale(x, scale="a")
    e = info.value
    assert isinstance(e, ArgumentError) and e.layer == "scale"
    assert "argument 'scale'" in str(e) and isinstance(e.__cause__, ValueError)


def test_dygraph_errors_carry_the_user_line_as_a_field():
    with fluid.dygraph.guard():
        a = fluid.dygraph.to_variable(np.ones((2, 3), "float32"))
        b = fluid.dygraph.to_variable(np.ones((2, 3), "float64"))
        with pytest.raises(DtypeError) as info:
            a + b
    assert info.value.callsite[0].endswith(THIS)
    assert str(info.value).count("called at") == 1


def test_context_is_added_once_and_fields_survive_pickling():
    e = ShapeError("bad shape", op="mul")
    e.with_context(op="other", layer="fc", variable="x")
    assert (e.op, e.layer, e.variable) == ("mul", "fc", "x")
    back = pickle.loads(pickle.dumps(ArgumentError("conv2d", "groups must be positive")))
    assert back.layer == "conv2d" and str(back) == "conv2d: groups must be positive"
    back = pickle.loads(pickle.dumps(e))
    assert str(back) == str(e) and back.variable == "x"
