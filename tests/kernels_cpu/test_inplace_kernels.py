"""Kernels registered with ``inplace=True`` give the same results when handed donated inputs."""

from __future__ import annotations

import numpy as np
import pytest
from oar.plugins import registries


def _kernel(op_type: str):
    entry = registries().kernels.lookup(op_type, "cpu", "float32")
    assert entry is not None and entry.inplace, op_type
    return entry.kernel


rng = np.random.default_rng(0)
A = rng.standard_normal((6, 5)).astype("float32")
B = rng.standard_normal((6, 5)).astype("float32")
ROW = rng.standard_normal(5).astype("float32")
P = np.exp(A) / np.exp(A).sum(-1, keepdims=True)

INPLACE_CASES = [
    ("relu", {"X": A}, {}, ["X"]),
    ("sigmoid", {"X": A}, {}, ["X"]),
    ("tanh", {"X": A}, {}, ["X"]),
    ("exp", {"X": A}, {}, ["X"]),
    ("square", {"X": A}, {}, ["X"]),
    ("relu_grad", {"Out": np.maximum(A, 0), "Out@GRAD": B}, {}, ["Out@GRAD", "Out"]),
    ("softmax", {"X": A}, {"axis": -1}, ["X"]),
    ("softmax_grad", {"Out": P, "Out@GRAD": B}, {"axis": -1}, ["Out@GRAD"]),
    ("elementwise_add", {"X": A, "Y": B}, {"axis": -1}, ["X"]),
    ("elementwise_add", {"X": A, "Y": B}, {"axis": -1}, ["Y"]),
    ("elementwise_add", {"X": A, "Y": ROW}, {"axis": -1}, ["X", "Y"]),
    ("elementwise_sub", {"X": ROW, "Y": A}, {"axis": -1}, ["Y"]),
    ("elementwise_sub", {"X": ROW, "Y": A}, {"axis": -1}, ["X"]),  # X too small to hold Out
    ("elementwise_mul", {"X": A, "Y": B}, {"axis": -1}, ["X", "Y"]),
]


@pytest.mark.parametrize("op_type,inputs,attrs,donated", INPLACE_CASES, ids=lambda v: str(v)[:30])
def test_donated_inputs_give_the_same_result(op_type, inputs, attrs, donated):
    fn = _kernel(op_type)
    expected = fn({k: v.copy() for k, v in inputs.items()}, attrs)
    given = {k: v.copy() for k, v in inputs.items()}
    got = fn(given, attrs, donated=frozenset(donated))
    for slot, want in expected.items():
        np.testing.assert_allclose(got[slot], want, rtol=1e-6)
        assert got[slot].dtype == want.dtype and got[slot].shape == want.shape
    # undonated inputs are untouched
    for k, v in inputs.items():
        if k not in donated:
            np.testing.assert_array_equal(given[k], v)


def test_sgd_with_donated_gradient():
    fn = _kernel("sgd")
    p1, p2 = A.copy(), A.copy()
    lr = np.array([0.1], "float32")
    fn({"Param": p1, "Grad": B.copy(), "LearningRate": lr}, {})
    fn({"Param": p2, "Grad": B.copy(), "LearningRate": lr}, {}, donated=frozenset({"Grad"}))
    np.testing.assert_array_equal(p1, p2)
    np.testing.assert_allclose(p1, A - 0.1 * B, rtol=1e-6)
