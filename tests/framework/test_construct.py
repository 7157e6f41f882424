"""Building programs from descriptions (oar.api.ProgramBuilder / build_program)."""

from __future__ import annotations

import numpy as np
import pytest
from oar import fluid
from oar.api import Parameter, ProgramBuilder, Variable, build_program, program_from_dict


def _relu_program():
    return build_program(
        [
            {
                "vars": [
                    {"name": "x", "shape": [-1, 3], "dtype": "float32", "is_data": True},
                    {"name": "w", "kind": "parameter", "shape": [3], "dtype": "float32"},
                    {"name": "y", "shape": [-1, 3], "dtype": "float32"},
                ],
                "ops": [
                    {
                        "type": "elementwise_add",
                        "inputs": {"X": ["x"], "Y": ["w"]},
                        "outputs": {"Out": ["y"]},
                        "attrs": {"axis": -1},
                    }
                ],
            }
        ],
        random_seed=7,
    )


def test_build_program_makes_runnable_ir():
    p = _relu_program()
    block = p.global_block()
    assert isinstance(block.vars["w"], Parameter) and block.vars["w"].persistable
    assert type(block.vars["x"]) is Variable and block.vars["x"].is_data
    assert p.random_seed == 7 and [op.type for op in block.ops] == ["elementwise_add"]
    scope = fluid.Scope()
    scope.var("w").get_tensor().set(np.array([1, 2, 3], "float32"), fluid.CPUPlace())
    exe = fluid.Executor(fluid.CPUPlace())
    (y,) = exe.run(p, feed={"x": np.zeros((2, 3), "float32")}, fetch_list=["y"], scope=scope)
    np.testing.assert_array_equal(y, [[1, 2, 3], [1, 2, 3]])


def test_program_from_dict_round_trips():
    p = _relu_program()
    assert program_from_dict(p.to_dict()).to_dict() == p.to_dict()


def test_builder_refuses_bad_descriptions():
    b = ProgramBuilder()
    with pytest.raises(ValueError, match="block 0 does not exist"):
        b.add_var(0, "x")
    b.add_block()
    b.add_var(0, "x", dtype="float32")
    with pytest.raises(ValueError, match="declared twice"):
        b.add_var(0, "x")
    with pytest.raises(ValueError, match="unknown fields \\['trainable'\\]"):
        b.add_var(0, "z", trainable=False)
    with pytest.raises(ValueError, match="kind 'buffer'"):
        b.add_var(0, "z", kind="buffer")
    with pytest.raises(ValueError, match="parent block 3"):
        b.add_block(parent_idx=3)
    with pytest.raises(ValueError, match="not declared"):
        b.set_var(0, "nope", is_data=True)
    with pytest.raises(ValueError, match="at least one block"):
        ProgramBuilder().build()
