"""``==``, ``!=``, ``<``, ``<=``, ``>``, ``>=`` on static Variables and dygraph VarBases, as in Fluid 1.8.5.

Each builds an element-wise compare op (bool result) with a variable or a Python number on
either side; ``__hash__`` stays identity-based, so variables remain dict keys and set members.
"""

from __future__ import annotations

import operator

import numpy as np
import pytest
from oar import fluid
from oar.fluid.dygraph import ProgramTranslator, declarative, to_variable

OPS = {
    "==": (operator.eq, "equal"),
    "!=": (operator.ne, "not_equal"),
    "<": (operator.lt, "less_than"),
    "<=": (operator.le, "less_equal"),
    ">": (operator.gt, "greater_than"),
    ">=": (operator.ge, "greater_equal"),
}
REFLECTED = {"<": ">", ">": "<", "<=": ">=", ">=": "<="}
X = np.array([[1, 2, 3], [4, 2, 0]], "float32")
Y = np.array([[1, 0, 3], [0, 2, 5]], "float32")


def _static(build):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data("x", [2, 3], "float32")
        y = fluid.data("y", [2, 3], "float32")
        outs = build(x, y)
    exe = fluid.Executor(fluid.CPUPlace())
    got = exe.run(main, feed={"x": X, "y": Y}, fetch_list=outs, scope=fluid.Scope())
    return main, outs, got


@pytest.mark.parametrize("sym", list(OPS))
def test_static_operator_builds_compare_op_and_matches_numpy(sym):
    fn, op_type = OPS[sym]
    main, outs, got = _static(lambda x, y: [fn(x, y), fn(x, 2), fn(2.0, x)])
    types = [op.type for op in main.global_block().ops if op.type != "fill_constant"]
    # ``2.0 < x`` is Python's reflected ``x > 2.0``, one op as in Fluid
    assert types == [op_type, op_type, OPS[REFLECTED.get(sym, sym)][1]]
    for var, value, want in zip(outs, got, [fn(X, Y), fn(X, 2), fn(2.0, X)]):
        assert var.dtype == "bool" and tuple(var.shape) == (2, 3)
        assert value.dtype == np.bool_
        np.testing.assert_array_equal(value, want)


@pytest.mark.parametrize("sym", list(OPS))
def test_dygraph_operator_matches_numpy(sym):
    fn, _ = OPS[sym]
    with fluid.dygraph.guard():
        x, y = to_variable(X), to_variable(Y)
        for got, want in [(fn(x, y), fn(X, Y)), (fn(x, 2), fn(X, 2)), (fn(2.5, x), fn(2.5, X))]:
            assert got.dtype == "bool" and list(got.shape) == [2, 3]
            np.testing.assert_array_equal(got.numpy(), want)


def test_dygraph_if_on_one_element_comparison_goes_by_value():
    fired = []
    with fluid.dygraph.guard():
        i = to_variable(np.array([2], "int64"))
        for k in range(4):
            if i == k:
                fired.append(("==", k))
            if i != k:
                fired.append(("!=", k))
        with pytest.raises(ValueError, match="ambiguous"):
            bool(to_variable(X) == 2)
    assert fired == [("!=", 0), ("!=", 1), ("==", 2), ("!=", 3)]


@declarative
def _branch(x):
    if fluid.layers.reduce_sum(x) == 12.0:
        y = x * 2
    else:
        y = x - 1
    return y


def test_declarative_if_on_equality_converts_and_equals_eager():
    pt = ProgramTranslator()
    try:
        for enabled in (True, False):
            pt.enable(enabled)
            with fluid.dygraph.guard():
                hit = _branch(to_variable(X)).numpy()
                miss = _branch(to_variable(Y)).numpy()
            np.testing.assert_allclose(hit, X * 2)
            np.testing.assert_allclose(miss, Y - 1)
    finally:
        pt.enable(True)


def test_static_variables_stay_hashable_and_in_compares_identity():
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        a, b, c = (fluid.data(n, [2], "float32") for n in "abc")
        table = {a: 1, b: 2}
        assert table[a] == 1 and table[b] == 2 and c not in table
        assert len({a, b, a}) == 2 and {a, b, a} == {a, b}
        assert b in [a, b] and c not in [a, b]
        assert [a, b, c].index(c) == 2
        items = [a, b, c]
        items.remove(b)
        assert [v.name for v in items] == ["a", "c"]
        # anything that is not a variable or a number compares by identity
        assert (a == None) is False and (a != None) is True  # noqa: E711
        assert (a == "a") is False and bool(a) is True


def test_varbases_stay_hashable_and_compare_by_identity_outside_dygraph():
    with fluid.dygraph.guard():
        a, b = to_variable(X), to_variable(Y)
        table = {a: 1, b: 2}
        assert table[a] == 1 and table[b] == 2 and len({a, b, a}) == 2
        assert a in [a, b] and (a == None) is False  # noqa: E711
    assert (a == b) is False and (a != b) is True and a not in [b]
