"""Small operands take the one-call path without planning a split (the per-op dispatch cost:
planning, with numpy's broadcast_shapes, cost about 4 µs an op), large ones still split."""

from __future__ import annotations

import numpy as np
import pytest
from oar.api import registries
from oar_kernels_cpu.kernels import _gemm, _split


def _refuse(*args, **kwargs):
    raise AssertionError("a small op planned a split")


@pytest.mark.parametrize("op", ["elementwise_add", "elementwise_mul"])
def test_small_elementwise_ops_never_plan_a_split(monkeypatch, op):
    monkeypatch.setattr(_split, "_split_plan", _refuse)
    kernel = registries().kernels.lookup(op, "cpu", "float32").kernel
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    y = np.full(4, 2, np.float32)
    out = kernel({"X": x, "Y": y}, {"axis": -1})["Out"]
    np.testing.assert_array_equal(out, x + y if op == "elementwise_add" else x * y)
    assert _split.ufunc(np, np.add, x, 1.5) is not None  # scalars count as one element


def test_host_check_looks_at_the_type():
    assert _gemm._host(np.ones(3)) and _split._host([np.ones(3), np.ones(2).view(np.matrix)])

    class Device:  # an array of another library: no __array_interface__ on its type
        shape = (3,)

    assert not _gemm._host(Device()) and not _split._host([np.ones(3), Device()])
