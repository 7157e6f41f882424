"""Kernels registered with ``small=(slot, threshold)``: a plan calls the kernel they override
directly for calls whose ``slot`` array is small (the size test in the generated step code), and
the registered kernel itself for the others; other callers still go through the kernel."""

from __future__ import annotations

import numpy as np
import pytest
from oar import fluid
from oar.plugins import registries
from oar.registry import OpDef
from oar.testing import scoped_registry

CALLS: list = []  # which kernel ran: "low" (the overridden one), "high", "through" (high to low)
THRESHOLD = 8


def _register(high_flags: dict) -> None:
    reg = registries()
    reg.ops.register_op(OpDef("_small_probe", ["X"], ["Out"]))

    def low(inputs, attrs, *extra, donated=frozenset()):
        CALLS.append("low")
        return {"Out": inputs["X"] * 2}

    def high(inputs, attrs, *extra, donated=frozenset()):
        if inputs["X"].size < THRESHOLD:  # hands small calls down, as it declares
            CALLS.append("through")
            return low(inputs, attrs, *extra, donated=donated)
        CALLS.append("high")
        return {"Out": inputs["X"] + inputs["X"]}

    reg.kernels.register_kernel("_small_probe", "cpu", None, low, 0, inplace=True)
    reg.kernels.register_kernel(
        "_small_probe", "cpu", None, high, 10, small=("X", THRESHOLD), **high_flags
    )


@pytest.fixture
def probe_op(request):
    with scoped_registry():
        _register(getattr(request, "param", {"inplace": True}))
        CALLS.clear()
        yield


def _run(size: int) -> np.ndarray:
    main = fluid.Program()
    block = main.global_block()
    with fluid.program_guard(main, fluid.Program()):
        x = fluid.layers.data("x", [size], dtype="float32", append_batch_size=False)
    block.create_var(name="out", shape=[size], dtype="float32")
    block.append_op("_small_probe", {"X": [x]}, {"Out": ["out"]}, infer=False)
    xs = np.arange(size, dtype="float32")
    exe = fluid.Executor(fluid.CPUPlace())
    got = [exe.run(main, feed={"x": xs}, fetch_list=["out"])[0] for _ in range(2)]
    for g in got:
        np.testing.assert_array_equal(g, xs * 2)
    return got[0]


def test_register_kernel_records_the_small_slot(probe_op):
    entry = registries().kernels.lookup("_small_probe", "cpu", "float32")
    assert entry.small == ("X", THRESHOLD) and entry.priority == 10


def test_small_calls_go_straight_to_the_overridden_kernel(probe_op):
    _run(THRESHOLD - 1)
    assert CALLS == ["low", "low"]


def test_large_calls_go_to_the_registered_kernel(probe_op):
    _run(THRESHOLD)
    assert CALLS == ["high", "high"]


@pytest.mark.parametrize("probe_op", [{"inplace": False}], indirect=True)
def test_another_calling_convention_keeps_the_call_through_the_kernel(probe_op):
    entry = registries().kernels.lookup("_small_probe", "cpu", "float32")
    below = registries().kernels.lookup_below("_small_probe", "cpu", "float32", 10)
    assert not entry.same_convention(below)
    call = entry.compile_call({}, (("X", "x"),), (), (("Out", "out", False),), (), below)
    assert call.small == ()


def test_a_sparse_slot_is_never_size_tested(probe_op):
    entry = registries().kernels.lookup("_small_probe", "cpu", "float32")
    below = registries().kernels.lookup_below("_small_probe", "cpu", "float32", 10)
    outs = (("Out", "out", False),)
    assert entry.compile_call({}, (("X", "x"),), (), outs, (), below).small[:2] == ("x", 8)
    assert entry.compile_call({}, (("X", "x"),), (), outs, ("x",), below).small == ()


def test_numba_optimizers_and_relu_declare_their_small_calls():
    pytest.importorskip("oar_kernels_numba")
    kernels = registries().kernels
    for op, slot in (("sgd", "Param"), ("adam", "Param"), ("relu", "X"), ("relu_grad", "Out@GRAD")):
        entry = kernels.lookup(op, "cpu", "float32")
        if entry.plugin != "kernels_numba":
            pytest.skip("the numba plugin is not active here")
        assert entry.small is not None and entry.small[0] == slot
        below = kernels.lookup_below(op, "cpu", "float32", entry.priority)
        assert entry.same_convention(below), op
