"""The kernel calling convention lives in ``oar.kernel_entry`` and nowhere else.

The static executor's plan, its step generator and the eager tracer call
kernels through ``KernelEntry`` / ``KernelCall``; they must not read the
registration flags themselves (that is how the convention drifted into six
call sites before).
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest
from oar.kernel_entry import KernelEntry
from oar.lod_tensor import LoDTensor, SelectedRows

SRC = Path(__file__).resolve().parents[2] / "packages/core/src/oar"
FLAGS = {"lod", "selected_rows", "wants_outputs", "inplace", "no_need_buffer", "small"}
CALLERS = ["executor/plan.py", "executor/stepgen.py", "executor/executor.py", "dygraph/tracer.py"]
CALLERS += ["dygraph/backward.py"]


def _flag_reads(path: Path) -> list:
    hits = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Attribute) and node.attr in FLAGS:
            hits.append(f"{path.name}:{node.lineno} .{node.attr}")
        elif isinstance(node, ast.keyword) and node.arg in FLAGS:
            hits.append(f"{path.name}:{node.lineno} {node.arg}=")
        elif isinstance(node, ast.Subscript):
            key = node.slice
            if isinstance(key, ast.Constant) and key.value in FLAGS:
                hits.append(f"{path.name}:{node.lineno} [{key.value!r}]")
    return hits


@pytest.mark.parametrize("rel", CALLERS)
def test_callers_do_not_interpret_kernel_flags(rel):
    assert _flag_reads(SRC / rel) == []


def test_the_check_sees_flag_reads():
    """The guard above can fail: the entry module itself reads every flag."""
    seen = {h.split(".")[-1] for h in _flag_reads(SRC / "kernel_entry.py") if " ." in h}
    assert FLAGS <= seen


def _entry(fn, **flags):
    return KernelEntry("op", "cpu", None, fn, **flags)


def test_wants_outputs_gets_the_wanted_slots_and_may_omit_outputs():
    seen = []

    def k(inputs, attrs, wanted):
        seen.append(wanted)
        return {"A": inputs["X"] + 1}

    call = _entry(k, wants_outputs=True).compile_call(
        {}, (("X", "x"),), (), (("A", "a", False), ("B", "b", False))
    )
    env = {"x": np.ones(2)}
    call.run(env)
    assert seen == [frozenset({"A", "B"})] and "b" not in env
    np.testing.assert_array_equal(env["a"], [2, 2])
    assert not _entry(k, wants_outputs=True).direct and _entry(k).direct


def test_plain_kernel_must_return_every_output():
    call = _entry(lambda i, a: {"A": i["X"]}).compile_call(
        {}, (("X", "x"),), (), (("A", "a", False), ("B", "b", False))
    )
    with pytest.raises(KeyError):
        call.run({"x": np.ones(1)})


def test_selected_rows_are_densified_unless_the_kernel_takes_them():
    sr = SelectedRows([1], height=3, value=np.ones((1, 2)))
    got = []

    def k(inputs, attrs):
        got.append(inputs["X"])
        return {"Out": 0}

    for flag in (False, True):
        call = _entry(k, selected_rows=flag).compile_call(
            {}, (("X", "g"),), (), (("Out", "o", False),), ("g",)
        )
        call.run({"g": sr})
    assert isinstance(got[0], np.ndarray) and got[0].shape == (3, 2)
    assert got[1] is sr


def test_lod_kernels_get_lod_tensors_and_set_output_lod():
    def k(inputs, attrs):
        x = inputs["X"]
        assert isinstance(x, LoDTensor)
        return {"Out": LoDTensor(np.asarray(x) * 2, [[0, 1, 3]])}

    call = _entry(k, lod=True).compile_call({}, (("X", "x"),), (), (("Out", "o", False),))
    assert call.takes_lod and not call.inlinable
    env, lods = {"x": np.ones((3, 1))}, {"x": [[0, 2, 3]]}
    call.run(env, lods)
    assert type(env["o"]) is np.ndarray and lods["o"] == [[0, 1, 3]]


def test_eager_call_adapts_lod_tensors_for_plain_kernels():
    def k(inputs, attrs):
        return {"Out": inputs["X"]}

    t = LoDTensor(np.ones((2, 1)), [[0, 2]])
    assert type(_entry(k).call_eager({"X": t}, {}, frozenset())["Out"]) is np.ndarray
    assert _entry(k, lod=True).call_eager({"X": t}, {}, frozenset())["Out"] is t


def test_donation_and_shape_only_reads_follow_the_flags():
    k = _entry(lambda i, a, donated=frozenset(): {"Out": i["X"]}, inplace=True)
    call = k.compile_call({}, (("X", "x"), ("Y", "y")), (), (("Out", "o", False),))
    assert call.donation_candidates({"x", "y"}, ["x", "y"], set()) == ("X", "Y")
    assert call.donation_candidates({"x"}, ["x", "x"], set()) == ()  # read twice
    assert call.donation_candidates({"x"}, ["x"], {"x"}) == ()  # also written
    plain = _entry(lambda i, a: {"Out": i["X"]}).compile_call(
        {}, (("X", "x"),), (), (("Out", "o", False),)
    )
    assert plain.donation_candidates({"x"}, ["x"], set()) == ()
    nnb = _entry(lambda i, a: {}, no_need_buffer=("X",)).compile_call(
        {}, (("X", "x"), ("D", "d")), (), ()
    )
    assert nnb.shape_only_names() == {"x"}
