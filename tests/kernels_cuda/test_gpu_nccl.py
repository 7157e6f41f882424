"""On a GPU only: the NCCL backend on real devices (the call sequence itself is also tested
everywhere against a host-memory NCCL: tests/dist/test_nccl_backend.py)."""

from __future__ import annotations

import threading

import numpy as np
import pytest

cupy = pytest.importorskip("cupy")
if not cupy.is_available():
    pytest.skip("cupy finds no usable GPU", allow_module_level=True)
pytest.importorskip("oar_dist")

from oar import fluid  # noqa: E402
from oar_dist.collective.nccl import NcclGroup  # noqa: E402

GPUS = cupy.cuda.runtime.getDeviceCount()


def _on_ranks(members, fn):
    out: list = [None] * len(members)

    def work(i):
        with cupy.cuda.Device(members[i].device_id):
            out[i] = fn(members[i])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(members))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return out


def test_one_gpu_allreduce_keeps_device_arrays_on_the_device():
    group = NcclGroup([0])
    x = cupy.arange(6, dtype="float32")
    out = group.members[0].allreduce(x)
    assert isinstance(out, cupy.ndarray)
    np.testing.assert_array_equal(cupy.asnumpy(out), np.arange(6, dtype="float32"))
    host = group.members[0].allreduce(np.ones(3, "float64"))
    assert isinstance(host, np.ndarray)


@pytest.mark.skipif(GPUS < 2, reason="needs 2 GPUs")
def test_two_gpus_allreduce_broadcast_allgather():
    group = NcclGroup([0, 1])

    def on(m):
        x = cupy.full(4, m.rank + 1.0, dtype="float32")
        return (
            cupy.asnumpy(m.allreduce(x)),
            cupy.asnumpy(m.broadcast(x, root=1)),
            cupy.asnumpy(m.allgather(x)),
        )

    for red, bc, ag in _on_ranks(group.members, on):
        np.testing.assert_array_equal(red, np.full(4, 3.0))
        np.testing.assert_array_equal(bc, np.full(4, 2.0))
        np.testing.assert_array_equal(ag, np.r_[np.full(4, 1.0), np.full(4, 2.0)])


@pytest.mark.skipif(GPUS < 2, reason="needs 2 GPUs")
def test_data_parallel_on_two_gpus_equals_cpu():
    def train(places, exe_place):
        main, startup = fluid.Program(), fluid.Program()
        main.random_seed = startup.random_seed = 5
        with fluid.program_guard(main, startup):
            x = fluid.data("x", [None, 8], "float32")
            y = fluid.data("y", [None, 1], "float32")
            loss = fluid.layers.mean(fluid.layers.square_error_cost(fluid.layers.fc(x, 1), y))
            fluid.optimizer.SGD(0.1).minimize(loss)
        exe, scope = fluid.Executor(exe_place), fluid.Scope()
        exe.run(startup, scope=scope)
        prog = fluid.CompiledProgram(main).with_data_parallel(loss_name=loss.name, places=places)
        rng = np.random.default_rng(0)
        out = []
        for _ in range(3):
            feed = {
                "x": rng.standard_normal((8, 8)).astype("float32"),
                "y": rng.standard_normal((8, 1)).astype("float32"),
            }
            (lv,) = exe.run(prog, feed=feed, fetch_list=[loss], scope=scope)
            out.append(float(np.mean(lv)))
        return out

    gpu = train(fluid.cuda_places([0, 1]), fluid.CUDAPlace(0))
    cpu = train(fluid.cpu_places(2), fluid.CPUPlace())
    np.testing.assert_allclose(gpu, cpu, rtol=1e-4)
