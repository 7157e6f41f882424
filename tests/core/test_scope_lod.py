"""Scope, LoDTensor, create_lod_tensor (the seed's examples) and places."""

from __future__ import annotations

import numpy as np
import pytest
from oar import fluid
from oar.errors import DeviceUnavailableError
from oar.plugins import registries

# --- Scope -------------------------------------------------------------------------------------


def test_scope_var_find_var_and_hierarchy():
    root = fluid.Scope()
    v = root.var("a")
    assert root.var("a") is v and root.find_var("a") is v
    assert root.find_var("missing") is None
    kid = root.new_scope()
    assert kid.parent() is root
    assert kid.find_var("a") is v  # lookups fall back to the parent
    assert kid.find_local_var("a") is None
    kv = kid.var("b")
    assert root.find_var("b") is None and kid.find_var("b") is kv
    shadow = kid.var("a")
    assert shadow is not v and kid.find_var("a") is shadow
    assert "b" in kid and "b" not in root


def test_scope_drop_kids():
    root = fluid.Scope()
    k1, k2 = root.new_scope(), root.new_scope()
    assert len(root._kids) == 2 and k1 is not k2
    root.drop_kids()
    assert root._kids == []


def test_scope_variable_tensor():
    scope = fluid.Scope()
    t = scope.var("w").get_tensor()
    assert not scope.var("w").is_initialized()
    t.set(np.ones((2, 2), "float32"), fluid.CPUPlace())
    assert scope.find_var("w").is_initialized()
    np.testing.assert_array_equal(np.array(scope.find_var("w").get_tensor()), np.ones((2, 2)))


def test_global_scope_and_scope_guard():
    outer = fluid.global_scope()
    mine = fluid.Scope()
    with fluid.scope_guard(mine):
        assert fluid.global_scope() is mine
        # the executor writes into the guarded scope by default
        main, startup = fluid.Program(), fluid.Program()
        with fluid.program_guard(main, startup), fluid.unique_name.guard():
            fluid.layers.create_parameter(
                [2], "float32", name="scoped_p", default_initializer=fluid.initializer.Constant(3.0)
            )
        fluid.Executor(fluid.CPUPlace()).run(startup)
    assert fluid.global_scope() is outer
    assert mine.find_var("scoped_p") is not None
    assert outer.find_var("scoped_p") is None
    with pytest.raises(TypeError, match="scope_guard takes a Scope"):
        with fluid.scope_guard("scope"):
            pass


# --- LoDTensor ----------------------------------------------------------------------------------


def test_lod_tensor_set_and_lod():
    t = fluid.LoDTensor()
    assert t.shape() == []
    data = np.arange(12, dtype="float32").reshape(6, 2)
    t.set(data, fluid.CPUPlace())
    data[0, 0] = 100  # set copies
    assert t.shape() == [6, 2]
    assert np.array(t)[0, 0] == 0
    t.set_lod([[0, 3, 4, 6]])
    assert t.lod() == [[0, 3, 4, 6]]
    assert t.recursive_sequence_lengths() == [[3, 1, 2]]
    assert t.has_valid_recursive_sequence_lengths()
    t.set_recursive_sequence_lengths([[2, 4]])
    assert t.lod() == [[0, 2, 6]]
    t.set_recursive_sequence_lengths([[2, 2]])
    assert not t.has_valid_recursive_sequence_lengths()  # 4 rows described, 6 present
    with pytest.raises(ValueError, match="non-decreasing offsets starting at 0"):
        t.set_lod([[1, 3]])


def test_lod_tensor_two_levels():
    t = fluid.LoDTensor()
    t.set(np.ones((15, 1), "int64"), fluid.CPUPlace())
    t.set_recursive_sequence_lengths([[3, 1, 2], [3, 2, 4, 1, 2, 3]])
    assert t.lod() == [[0, 3, 4, 6], [0, 3, 5, 9, 10, 12, 15]]
    assert t.has_valid_recursive_sequence_lengths()
    t.set_recursive_sequence_lengths([[3, 1, 1], [3, 2, 4, 1, 2, 3]])
    assert not t.has_valid_recursive_sequence_lengths()  # level 0 covers 5 of 6 sequences


def test_empty_lod_tensor_to_numpy_is_a_clear_error():
    with pytest.raises(ValueError, match="holds no data"):
        np.array(fluid.LoDTensor())


def test_create_lod_tensor_seed_example():
    """The seed's 2-level example, verbatim."""
    a = fluid.create_lod_tensor(
        np.array(
            [[1], [1], [1], [1], [1], [1], [1], [1], [1], [1], [1], [1], [1], [1], [1]]
        ).astype("int64"),
        [[3, 1, 2], [3, 2, 4, 1, 2, 3]],
        fluid.CPUPlace(),
    )
    assert len(a.recursive_sequence_lengths()) == 2
    assert sum(a.recursive_sequence_lengths()[-1]) == 15


def test_lod_tensor_to_tensor_seed_example():
    a = fluid.create_lod_tensor(
        np.array([[1.1], [2.2], [3.3], [4.4]]).astype("float32"), [[1, 3]], fluid.CPUPlace()
    )
    lod = a.lod()
    array = np.array(a)
    parts = [array[lod[0][i] : lod[0][i + 1]] for i in range(len(lod[0]) - 1)]
    assert [p.shape for p in parts] == [(1, 1), (3, 1)]
    np.testing.assert_allclose(parts[1].ravel(), [2.2, 3.3, 4.4], rtol=1e-6)


def test_create_lod_tensor_from_list_of_sequences():
    t = fluid.create_lod_tensor([[1, 2], [3], [4, 5, 6]], [[2, 1, 3]], fluid.CPUPlace())
    assert np.array(t).dtype == np.int64 and np.array(t).shape == (6, 1)
    assert t.lod() == [[0, 2, 3, 6]]
    with pytest.raises(ValueError, match="do not match recursive_seq_lens"):
        fluid.create_lod_tensor([[1, 2], [3]], [[1, 2]], fluid.CPUPlace())


def test_create_lod_tensor_checks_lengths():
    with pytest.raises(ValueError, match="do not fit data with 4 rows"):
        fluid.create_lod_tensor(np.zeros((4, 1), "float32"), [[1, 2]], fluid.CPUPlace())


# --- places ---------------------------------------------------------------------------------------


def test_places():
    assert fluid.CPUPlace() == fluid.CPUPlace()
    assert fluid.CUDAPlace(1) != fluid.CUDAPlace(0)
    assert fluid.CUDAPlace(1).gpu_device_id() == 1 and fluid.CUDAPlace(0).is_gpu_place()
    assert fluid.CPUPlace().is_cpu_place() and not fluid.CPUPlace().is_gpu_place()
    assert repr(fluid.CUDAPlace(2)) == "CUDAPlace(2)"
    with pytest.raises(ValueError, match="device_id must be a non-negative int"):
        fluid.CUDAPlace(-1)
    assert len(fluid.cpu_places(3)) == 3 and all(p == fluid.CPUPlace() for p in fluid.cpu_places(3))


def test_cpu_places_default_reads_cpu_num(monkeypatch):
    monkeypatch.setenv("CPU_NUM", "2")
    assert len(fluid.cpu_places()) == 2


def test_cuda_places_without_a_gpu(monkeypatch):
    monkeypatch.delenv("OAR_FALLBACK_DEVICE", raising=False)
    dev = registries().devices.get("cuda")
    if dev is not None and dev.available():
        pytest.skip("a CUDA device is available here")
    with pytest.raises(DeviceUnavailableError, match="pip install oar-kernels-cuda"):
        fluid.cuda_places()
    # running on a CUDAPlace names the device and the install command
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        x = fluid.layers.fill_constant([1], "float32", 1.0)
        with pytest.raises(DeviceUnavailableError, match="CUDAPlace\\(0\\).*oar-kernels-cuda"):
            fluid.Executor(fluid.CUDAPlace(0)).run(fetch_list=[x])


def test_cuda_place_falls_back_to_cpu_when_asked(monkeypatch):
    dev = registries().devices.get("cuda")
    if dev is not None and dev.available():
        pytest.skip("a CUDA device is available here")
    monkeypatch.setenv("OAR_FALLBACK_DEVICE", "cpu")
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        x = fluid.layers.fill_constant([2], "float32", 4.0)
        with pytest.warns(RuntimeWarning, match="running on CPU"):
            (out,) = fluid.Executor(fluid.CUDAPlace(0)).run(fetch_list=[x])
    assert out.tolist() == [4.0, 4.0]
    assert len(fluid.cuda_places()) == 1


def test_eof_exception_is_exposed():
    assert issubclass(fluid.core.EOFException, Exception)
