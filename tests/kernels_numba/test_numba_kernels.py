"""oar-kernels-numba's kernels against the numpy kernels they override, bit for bit.

The whole op conformance suite (tests/kernels_cpu) also runs with these kernels
winning on ``cpu`` whenever the plugin is installed (``tox -e numba``), and
without them under ``OAR_DISABLE_PLUGINS=kernels_numba`` (``tox -e core-cpu``).
Sizes here are above ``PARALLEL_MIN`` where a loop has a parallel twin, so both the
serial and the parallel compilation are exercised (and must agree exactly: the
result may not depend on the thread count).
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

pytest.importorskip("oar_kernels_numba")
from oar.api import LoDTensor, SelectedRows, registries
from oar_kernels_numba.compat import unavailable_reason

if unavailable_reason() is not None:
    pytest.skip(f"numba unavailable: {unavailable_reason()}", allow_module_level=True)

from oar_kernels_numba import _jit
from oar_kernels_numba.plugin import PRIORITY

rng = np.random.default_rng(17)
BIG = _jit.PARALLEL_MIN + 37  # odd size: the parallel loop's chunks are uneven


def _pair(op_type, dtype="float32"):
    kernels = registries().kernels
    mine = kernels.lookup(op_type, "cpu", dtype)
    below = kernels.lookup_below(op_type, "cpu", dtype, PRIORITY)
    assert mine.plugin == "kernels_numba", f"{op_type}: {mine.plugin}'s kernel wins"
    assert below is not None and below.plugin == "kernels_cpu"
    return mine.kernel, below.kernel


def _copy(d):
    return {
        k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in d.items() if v is not None
    }


def _same(a: dict, b: dict):
    assert a.keys() == b.keys()
    for k in a:
        x, y = np.asarray(a[k]), np.asarray(b[k])
        assert x.dtype == y.dtype and x.shape == y.shape, k
        np.testing.assert_array_equal(x, y, err_msg=k)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("size", [33, BIG])
def test_adam_dense_bit_for_bit(dtype, size):
    mine, numpy_k = _pair("adam", dtype)
    inputs = {
        "Param": rng.standard_normal(size).astype(dtype),
        "Grad": rng.standard_normal(size).astype(dtype),
        "Moment1": rng.standard_normal(size).astype(dtype) * 0.1,
        "Moment2": rng.random(size).astype(dtype) * 0.1,
        "LearningRate": np.array([0.01], dtype),
        "Beta1Pow": np.array([0.9**3], dtype),
        "Beta2Pow": np.array([0.999**3], dtype),
    }
    attrs = {"beta1": 0.9, "beta2": 0.999, "epsilon": 1e-8, "lazy_mode": False}
    for _ in range(2):  # the state written by step 1 feeds step 2
        got, want = mine(_copy(inputs), attrs), numpy_k(_copy(inputs), attrs)
        _same(got, want)
        inputs.update({k[:-3]: v for k, v in want.items()})


def test_adam_lazy_selected_rows():
    mine, numpy_k = _pair("adam")
    p = rng.standard_normal((20, 6)).astype("float32")
    rows = [3, 7, 3, 19, 0]
    g = SelectedRows(rows, 20, rng.standard_normal((5, 6)).astype("float32"))
    inputs = {
        "Param": p,
        "Grad": g,
        "Moment1": np.zeros_like(p),
        "Moment2": np.zeros_like(p),
        "LearningRate": np.array([0.1], "float32"),
        "Beta1Pow": np.array([0.9], "float32"),
        "Beta2Pow": np.array([0.999], "float32"),
    }
    attrs = {"beta1": 0.9, "beta2": 0.999, "epsilon": 1e-8, "lazy_mode": True}
    got, want = mine(_copy(inputs), attrs), numpy_k(_copy(inputs), attrs)
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-6, atol=1e-7, err_msg=k)
    untouched = [r for r in range(20) if r not in rows]
    np.testing.assert_array_equal(got["ParamOut"][untouched], p[untouched])


@pytest.mark.parametrize("size", [10, BIG])
def test_sgd_and_momentum_bit_for_bit(size):
    mine, numpy_k = _pair("sgd")
    inputs = {
        "Param": rng.standard_normal(size).astype("float32"),
        "Grad": rng.standard_normal(size).astype("float32"),
        "LearningRate": np.array([0.05], "float32"),
    }
    _same(mine(_copy(inputs), {}), numpy_k(_copy(inputs), {}))
    # the donated path of the numpy kernel scales the gradient in place: the same numbers
    _same(mine(_copy(inputs), {}), numpy_k(_copy(inputs), {}, donated=frozenset({"Grad"})))
    mine, numpy_k = _pair("momentum")
    inputs["Velocity"] = rng.standard_normal(size).astype("float32")
    for nesterov in (False, True):
        attrs = {"mu": 0.9, "use_nesterov": nesterov}
        _same(mine(_copy(inputs), attrs), numpy_k(_copy(inputs), attrs))


def test_sgd_selected_rows_repeated_rows():
    mine, numpy_k = _pair("sgd")
    p = rng.standard_normal((10, 4)).astype("float32")
    g = SelectedRows([1, 5, 1], 10, rng.standard_normal((3, 4)).astype("float32"))
    lr = np.array([0.5], "float32")
    got = mine({"Param": p.copy(), "Grad": g, "LearningRate": lr}, {})
    want = numpy_k({"Param": p.copy(), "Grad": g, "LearningRate": lr}, {})
    np.testing.assert_allclose(got["ParamOut"], want["ParamOut"], rtol=1e-6)


@pytest.mark.parametrize("size", [(7, 5), (BIG,)])
def test_relu_and_grad_bit_for_bit(size):
    mine, numpy_k = _pair("relu")
    x = rng.standard_normal(size).astype("float32")
    x.reshape(-1)[:3] = [np.nan, -0.0, 0.0]
    _same(mine({"X": x.copy()}, {}), numpy_k({"X": x.copy()}, {}))
    donated = x.copy()
    out = mine({"X": donated}, {}, donated=frozenset({"X"}))["Out"]
    assert out is donated  # a dying input holds the result, as in the numpy kernel
    mine, numpy_k = _pair("relu_grad")
    y = np.maximum(x, 0)
    d = rng.standard_normal(size).astype("float32")
    _same(mine({"Out": y, "Out@GRAD": d.copy()}, {}), numpy_k({"Out": y, "Out@GRAD": d}, {}))


def test_non_contiguous_input_goes_to_the_numpy_kernel():
    mine, numpy_k = _pair("relu")
    x = rng.standard_normal((6, 8)).astype("float32")[:, ::2]
    _same(mine({"X": x}, {}), numpy_k({"X": x}, {}))


def test_serial_loops_off_the_main_thread():
    """Place threads of the data-parallel executor run the serial loops: same numbers."""
    mine, _ = _pair("relu")
    x = rng.standard_normal(BIG).astype("float32")
    main = mine({"X": x}, {})["Out"]
    box = {}
    t = threading.Thread(target=lambda: box.update(out=mine({"X": x}, {})["Out"]))
    t.start()
    t.join(60)
    np.testing.assert_array_equal(box["out"], main)


@pytest.mark.parametrize("kind", ["SUM", "AVERAGE", "SQRT", "MAX", "FIRST"])
def test_sequence_pool(kind):
    mine, numpy_k = _pair("sequence_pool")
    gmine, gnumpy = _pair("sequence_pool_grad")
    x = rng.standard_normal((9, 3, 2)).astype("float32")
    t = LoDTensor(x, [[0, 4, 4, 9]])  # an empty sequence in the middle
    attrs = {"pooltype": kind, "pad_value": 0.5}
    got, want = mine({"X": t}, attrs), numpy_k({"X": t}, attrs)
    for k in want:
        np.testing.assert_allclose(np.asarray(got[k]), np.asarray(want[k]), rtol=1e-6, err_msg=k)
    dout = rng.standard_normal((3, 3, 2)).astype("float32")
    ins = {"X": t, "Out@GRAD": dout, "MaxIndex": np.asarray(want["MaxIndex"])}
    got, want = gmine(ins, attrs), gnumpy(ins, attrs)
    np.testing.assert_allclose(np.asarray(got["X@GRAD"]), np.asarray(want["X@GRAD"]), rtol=1e-6)
    assert got["X@GRAD"].lod() == want["X@GRAD"].lod()
