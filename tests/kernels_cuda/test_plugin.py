"""oar-kernels-cuda on any machine: it imports without cupy or a GPU, says why the device is
unavailable, and registers a kernel for every op that oar-kernels-cpu has (the meta-test)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("oar_kernels_cuda")

from oar import fluid
from oar.plugins import registries
from oar_kernels_cuda import runtime

GPU = runtime.available()


def test_device_is_registered_and_says_why_it_is_unavailable():
    dev = registries().devices.get("cuda")
    assert dev is not None and dev.plugin == "kernels_cuda"
    if GPU:
        pytest.skip("a GPU is usable here")
    assert dev.available() is False and dev.count() == 0
    assert dev.unavailable_reason()
    assert fluid.is_compiled_with_cuda() is False
    assert fluid.core.get_cuda_device_count() == 0


def test_a_cuda_program_without_a_gpu_names_the_reason(monkeypatch):
    if GPU:
        pytest.skip("a GPU is usable here")
    from oar.errors import DeviceUnavailableError

    monkeypatch.delenv("OAR_FALLBACK_DEVICE", raising=False)
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        x = fluid.layers.fill_constant([1], "float32", 1.0)
        with pytest.raises(DeviceUnavailableError) as info:
            fluid.Executor(fluid.CUDAPlace(0)).run(fetch_list=[x])
    assert "kernels_cuda" in str(info.value) and runtime.unavailable_reason() in str(info.value)


def test_every_op_with_a_cpu_kernel_has_a_cuda_kernel():
    """The registration covers oar-kernels-cpu entirely: generic kernels with cupy bound, the
    numpy-only ones through the host fallback (priority -10)."""
    kernels = registries().kernels
    cpu_ops = {
        e.op_type for e in kernels.entries() if e.device == "cpu" and e.plugin == "kernels_cpu"
    }
    cuda_ops = {e.op_type for e in kernels.entries() if e.device == "cuda"}
    assert len(cpu_ops) > 300
    assert cpu_ops - cuda_ops == set()
    numpy_only = {e.op_type for e in kernels.entries() if e.device == "cpu" and e.generic is False}
    host = {
        e.op_type
        for e in kernels.entries()
        if e.device == "cuda" and e.kernel.__name__.startswith("host_")
    }
    assert numpy_only & cpu_ops <= host


def test_fused_updates_override_the_generic_ones():
    kernels = registries().kernels
    for op in ("sgd", "momentum", "adam"):
        entry = kernels.lookup(op, "cuda", "float32")
        assert entry.priority == 10 and entry.kernel.__module__ == "oar_kernels_cuda.fused", op
    # float16 keeps the generic kernel (cupy's half arithmetic is not numpy's)
    assert kernels.lookup("adam", "cuda", "float16").priority == 0


def test_oar_plugins_lists_the_cuda_column():
    r = subprocess.run(
        [sys.executable, "-m", "oar", "plugins", "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    import json

    report = json.loads(r.stdout)
    cuda = next(d for d in report["devices"] if d["name"] == "cuda")
    assert cuda["available"] is GPU
    assert "cuda" in report["ops"]["conv2d"]["kernels"]


def test_host_fallback_moves_lod_and_selected_rows_through_the_host():
    from oar import LoDTensor, SelectedRows
    from oar_kernels_cuda.host_fallback import host_kernel

    moved = []

    class Dev(np.ndarray):
        pass

    def to_host(a):
        moved.append("to")
        return np.asarray(a).view(np.ndarray)

    def from_host(a, device_id):
        moved.append("from")
        return np.asarray(a).view(Dev)

    def kernel(inputs, attrs):
        x, rows = inputs["X"], inputs["R"]
        assert type(np.asarray(x)) is np.ndarray and isinstance(rows, SelectedRows)
        assert type(rows.value) is np.ndarray
        return {"Out": LoDTensor(np.asarray(x) * 2, x.lod()), "L": [np.ones(2), np.zeros(1)]}

    x = LoDTensor(np.arange(3.0).view(Dev), [[0, 1, 3]])
    r = SelectedRows([0, 2], 4, np.ones((2, 2)).view(Dev))
    out = host_kernel(kernel, to_host, from_host)({"X": x, "R": r}, {})
    assert isinstance(out["Out"], LoDTensor) and out["Out"].lod() == [[0, 1, 3]]
    assert type(out["Out"]._array) is Dev and np.asarray(out["Out"]).tolist() == [0.0, 2.0, 4.0]
    assert [type(a) for a in out["L"]] == [Dev, Dev]
    assert moved.count("to") == 1 and moved.count("from") == 3  # the LoDTensor's array: np.asarray
