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
from oar.api import LoDTensor, SelectedRows
from oar_kernels_numba.compat import unavailable_reason

if unavailable_reason() is not None:
    pytest.skip(f"numba unavailable: {unavailable_reason()}", allow_module_level=True)

from oar_kernels_numba import _jit

rng = np.random.default_rng(17)
BIG = _jit.PARALLEL_MIN + 37  # odd size: the parallel loop's chunks are uneven
MID = _jit.SMALL + 5  # compiled, serial (smaller arrays go to the numpy kernels: dispatch cost)


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
@pytest.mark.parametrize("betas", ["attrs", "tensors"])
@pytest.mark.parametrize("size", [33, 512, MID, BIG])  # 512: a bias, compiled too
def test_adam_dense_bit_for_bit(dtype, size, betas, numba_pair):
    mine, numpy_k = numba_pair("adam", dtype)
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
    if betas == "tensors":  # they win over the attrs (and are not cached with them)
        inputs["Beta1Tensor"] = np.array([0.8], "float32")
        inputs["Beta2Tensor"] = np.array([0.99], "float32")
    for _ in range(2):  # the state written by step 1 feeds step 2
        got, want = mine(_copy(inputs), attrs), numpy_k(_copy(inputs), attrs)
        _same(got, want)
        inputs.update({k[:-3]: v for k, v in want.items()})


def test_adam_lazy_selected_rows(numba_pair):
    mine, numpy_k = numba_pair("adam")
    p = rng.standard_normal((20, 600)).astype("float32")
    rows = [3, 7, 3, 19, 0]
    g = SelectedRows(rows, 20, rng.standard_normal((5, 600)).astype("float32"))
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


@pytest.mark.parametrize("size", [10, MID, BIG])
def test_sgd_and_momentum_bit_for_bit(size, numba_pair):
    mine, numpy_k = numba_pair("sgd")
    inputs = {
        "Param": rng.standard_normal(size).astype("float32"),
        "Grad": rng.standard_normal(size).astype("float32"),
        "LearningRate": np.array([0.05], "float32"),
    }
    _same(mine(_copy(inputs), {}), numpy_k(_copy(inputs), {}))
    # the donated path of the numpy kernel scales the gradient in place: the same numbers
    _same(mine(_copy(inputs), {}), numpy_k(_copy(inputs), {}, donated=frozenset({"Grad"})))
    mine, numpy_k = numba_pair("momentum")
    inputs["Velocity"] = rng.standard_normal(size).astype("float32")
    for nesterov in (False, True):
        attrs = {"mu": 0.9, "use_nesterov": nesterov}
        _same(mine(_copy(inputs), attrs), numpy_k(_copy(inputs), attrs))


def test_sgd_selected_rows_repeated_rows(numba_pair):
    mine, numpy_k = numba_pair("sgd")
    p = rng.standard_normal((10, 4)).astype("float32")
    g = SelectedRows([1, 5, 1], 10, rng.standard_normal((3, 4)).astype("float32"))
    lr = np.array([0.5], "float32")
    got = mine({"Param": p.copy(), "Grad": g, "LearningRate": lr}, {})
    want = numpy_k({"Param": p.copy(), "Grad": g, "LearningRate": lr}, {})
    np.testing.assert_allclose(got["ParamOut"], want["ParamOut"], rtol=1e-6)


@pytest.mark.parametrize("size", [(7, 5), (MID,), (BIG,)])
def test_relu_and_grad_bit_for_bit(size, numba_pair):
    mine, numpy_k = numba_pair("relu")
    x = rng.standard_normal(size).astype("float32")
    x.reshape(-1)[:3] = [np.nan, -0.0, 0.0]
    _same(mine({"X": x.copy()}, {}), numpy_k({"X": x.copy()}, {}))
    donated = x.copy()
    out = mine({"X": donated}, {}, donated=frozenset({"X"}))["Out"]
    assert out is donated  # a dying input holds the result, as in the numpy kernel
    mine, numpy_k = numba_pair("relu_grad")
    y = np.maximum(x, 0)
    d = rng.standard_normal(size).astype("float32")
    _same(mine({"Out": y, "Out@GRAD": d.copy()}, {}), numpy_k({"Out": y, "Out@GRAD": d}, {}))


def test_non_contiguous_input_goes_to_the_numpy_kernel(numba_pair):
    mine, numpy_k = numba_pair("relu")
    x = rng.standard_normal((MID, 8)).astype("float32")[:, ::2]
    _same(mine({"X": x}, {}), numpy_k({"X": x}, {}))


def test_loops_off_the_main_thread(numba_pair):
    """Another Python thread (a data-parallel place) gets the same numbers."""
    mine, _ = numba_pair("relu")
    x = rng.standard_normal(BIG).astype("float32")
    main = mine({"X": x}, {})["Out"]
    box = {}
    t = threading.Thread(target=lambda: box.update(out=mine({"X": x}, {})["Out"]))
    t.start()
    t.join(60)
    np.testing.assert_array_equal(box["out"], main)


@pytest.mark.parametrize("kind", ["SUM", "AVERAGE", "SQRT", "MAX", "FIRST"])
def test_sequence_pool(kind, numba_pair):
    mine, numpy_k = numba_pair("sequence_pool")
    gmine, gnumpy = numba_pair("sequence_pool_grad")
    x = rng.standard_normal((9, 3, 2)).astype("float32")
    t = LoDTensor(x, [[0, 4, 4, 9]])  # an empty sequence in the middle
    attrs = {"pooltype": kind, "pad_value": 0.5}
    got, want = mine({"X": t}, attrs), numpy_k({"X": t}, attrs)
    for k in want:
        np.testing.assert_allclose(
            np.asarray(got[k]), np.asarray(want[k]), rtol=1e-6, atol=1e-6, err_msg=k
        )
    dout = rng.standard_normal((3, 3, 2)).astype("float32")
    ins = {"X": t, "Out@GRAD": dout, "MaxIndex": np.asarray(want["MaxIndex"])}
    got, want = gmine(ins, attrs), gnumpy(ins, attrs)
    np.testing.assert_allclose(np.asarray(got["X@GRAD"]), np.asarray(want["X@GRAD"]), rtol=1e-6)
    assert got["X@GRAD"].lod() == want["X@GRAD"].lod()


@pytest.mark.parametrize("op_type", ["lookup_table_grad", "lookup_table_v2_grad"])
@pytest.mark.parametrize("padding_idx", [-1, 3])
def test_dense_embedding_grad_bit_for_bit(op_type, padding_idx, numba_pair):
    mine, numpy_k = numba_pair(op_type)
    w = rng.standard_normal((12, 5)).astype("float32")
    ids = rng.integers(0, 12, (40, 1) if op_type == "lookup_table_grad" else (8, 5))
    d = rng.standard_normal((40, 5)).astype("float32").reshape(ids.shape[:1] + (-1, 5)[-2:])
    d = d.reshape((40, 5) if op_type == "lookup_table_grad" else (8, 5, 5))
    attrs = {"is_sparse": False, "padding_idx": padding_idx, "is_distributed": False}
    ins = {"W": w, "Ids": ids, "Out@GRAD": d}
    _same(mine(ins, attrs), numpy_k(ins, attrs))
    bad = dict(ins, Ids=np.full_like(ids, 12))
    with pytest.raises(ValueError, match="outside the table"):
        mine(bad, attrs)
    sparse = mine(ins, dict(attrs, is_sparse=True))["W@GRAD"]
    assert isinstance(sparse, SelectedRows)


@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("shape,axis", [((64, 96), 1), ((8, 12, 64), 2), ((4, 40, 300), 1)])
def test_layer_norm_and_grad(affine, shape, axis, numba_pair):
    mine, numpy_k = numba_pair("layer_norm", "float64")
    gmine, gnumpy = numba_pair("layer_norm_grad", "float64")
    x = rng.standard_normal(shape) * 3 + 1
    d = int(np.prod(shape[axis:]))
    ins = {"X": x}
    if affine:
        ins.update(Scale=rng.standard_normal(d), Bias=rng.standard_normal(d))
    attrs = {"begin_norm_axis": axis, "epsilon": 1e-5, "is_test": False}
    got, want = mine(dict(ins), attrs), numpy_k(dict(ins), attrs)
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-10, atol=1e-12, err_msg=k)
    gins = dict(ins, Mean=want["Mean"], Variance=want["Variance"])
    gins["Y@GRAD"] = rng.standard_normal(shape)
    wanted = frozenset({"X@GRAD", "Scale@GRAD", "Bias@GRAD"} if affine else {"X@GRAD"})
    got, want = gmine(dict(gins), attrs, wanted), gnumpy(dict(gins), attrs, wanted)
    assert got.keys() == want.keys()
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-9, atol=1e-11, err_msg=k)


def test_layer_norm_float32_within_tolerance(numba_pair):
    mine, numpy_k = numba_pair("layer_norm", "float32")
    x = rng.standard_normal((64, 128)).astype("float32")
    attrs = {"begin_norm_axis": 1, "epsilon": 1e-5, "is_test": False}
    got, want = mine({"X": x}, attrs), numpy_k({"X": x}, attrs)
    for k in want:
        assert got[k].dtype == want[k].dtype
        np.testing.assert_allclose(got[k], want[k], rtol=1e-5, atol=1e-5, err_msg=k)
