"""Tensor arrays: create_array / array_write / array_read / array_length / tensor_array_to_tensor."""

from __future__ import annotations

import numpy as np
import pytest
from oar import fluid
from oar.errors import OarError


@pytest.fixture(autouse=True)
def _own_names():
    """Fresh unique-name counters per test: the names (and so the initial values) of other
    modules' parameters do not depend on whether these tests ran first."""
    with fluid.unique_name.guard():
        yield


def _run(build, feed=None):
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        fetches = build()
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(start, scope=scope)
    return exe.run(main, feed=feed or {}, fetch_list=fetches, scope=scope)


def test_write_read_length_and_concat():
    x = np.arange(6, dtype="float32").reshape(2, 3)

    def build():
        xv = fluid.data("x", [2, 3], "float32")
        arr = fluid.layers.create_array("float32")
        for k in range(3):
            i = fluid.layers.fill_constant([1], "int64", k)
            fluid.layers.array_write(xv * float(k + 1), i, array=arr)
        one = fluid.layers.fill_constant([1], "int64", 1)
        r = fluid.layers.array_read(arr, one)
        n = fluid.layers.array_length(arr)
        cat, idx = fluid.layers.tensor_array_to_tensor(arr, axis=1)
        st, _ = fluid.layers.tensor_array_to_tensor(arr, axis=0, use_stack=True)
        assert r.shape == (2, 3)
        return [r, n, cat, idx, st, arr]

    r, n, cat, idx, st, arr = _run(build, {"x": x})
    np.testing.assert_array_equal(r, 2 * x)
    assert n.tolist() == [3]
    np.testing.assert_array_equal(cat, np.concatenate([x, 2 * x, 3 * x], axis=1))
    assert idx.tolist() == [3, 3, 3]
    np.testing.assert_array_equal(st, np.stack([x, 2 * x, 3 * x]))
    assert isinstance(arr, list) and len(arr) == 3
    np.testing.assert_array_equal(arr[2], 3 * x)


def test_array_write_creates_the_array_and_keeps_lod():
    data = fluid.create_lod_tensor(np.arange(5, dtype="float32").reshape(5, 1), [[2, 3]], None)

    def build():
        xv = fluid.data("x", [-1, 1], "float32", lod_level=1)
        i = fluid.layers.fill_constant([1], "int64", 0)
        arr = fluid.layers.array_write(xv, i)
        assert arr.type == fluid.core.VarDesc.VarType.LOD_TENSOR_ARRAY
        pooled = fluid.layers.sequence_pool(fluid.layers.array_read(arr, i), "sum")
        return [pooled]

    (pooled,) = _run(build, {"x": data})
    np.testing.assert_array_equal(pooled.reshape(-1), [1.0, 9.0])


def test_gradient_through_array_write_read_and_concat():
    x = np.random.RandomState(0).rand(2, 3).astype("float32")

    def build():
        xv = fluid.data("x", [2, 3], "float32")
        xv.stop_gradient = False
        arr = fluid.layers.create_array("float32")
        i0 = fluid.layers.fill_constant([1], "int64", 0)
        i1 = fluid.layers.fill_constant([1], "int64", 1)
        fluid.layers.array_write(xv * 2.0, i0, array=arr)
        fluid.layers.array_write(xv * xv, i1, array=arr)
        cat, _ = fluid.layers.tensor_array_to_tensor(arr, axis=0)
        r = fluid.layers.array_read(arr, i1)
        loss = fluid.layers.reduce_sum(cat) + fluid.layers.reduce_sum(r * 3.0)
        (g,) = fluid.gradients([loss], [xv])
        return [g]

    (g,) = _run(build, {"x": x})
    np.testing.assert_allclose(g, 2.0 + 2 * x + 3 * 2 * x, rtol=1e-6)


def test_bad_arguments_name_the_layer():
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        x = fluid.data("x", [2], "float32")
        i = fluid.layers.fill_constant([1], "int64", 0)
        with pytest.raises(TypeError, match="array_read.*tensor array"):
            fluid.layers.array_read(x, i)
        arr = fluid.layers.create_array("float32")
        f = fluid.layers.fill_constant([1], "float32", 0)
        with pytest.raises(TypeError, match="array_write.*int64"):
            fluid.layers.array_write(x, f, array=arr)


def test_reading_an_unwritten_index_is_a_runtime_error():
    def build():
        arr = fluid.layers.create_array("float32")
        x = fluid.layers.fill_constant([1], "float32", 1.0)
        fluid.layers.array_write(x, fluid.layers.fill_constant([1], "int64", 0), array=arr)
        return [fluid.layers.array_read(arr, fluid.layers.fill_constant([1], "int64", 4))]

    with pytest.raises(OarError, match="read_from_array.*index 4"):
        _run(build)


def test_dygraph_arrays_are_lists():
    with fluid.dygraph.guard():
        x = fluid.dygraph.to_variable(np.ones([2], "float32"))
        arr = fluid.layers.create_array("float32")
        i = fluid.layers.fill_constant([1], "int64", 0)
        fluid.layers.array_write(x, i, array=arr)
        fluid.layers.array_write(x * 2, i + 1, array=arr)
        assert fluid.layers.array_length(arr).numpy().tolist() == [2]
        np.testing.assert_array_equal(fluid.layers.array_read(arr, i + 1).numpy(), [2.0, 2.0])
        out, _ = fluid.layers.tensor_array_to_tensor(arr, axis=0)
        np.testing.assert_array_equal(out.numpy(), [1, 1, 2, 2])
