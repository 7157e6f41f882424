"""On a GPU only: the cuda device against the cpu one (training, copies, the fused updates).
The op conformance suite (tests/kernels_cpu) also runs every OpCase on ``cuda`` when a GPU is
usable, since it parametrises over every available device."""

from __future__ import annotations

import numpy as np
import pytest

cupy = pytest.importorskip("cupy")
if not cupy.is_available():
    pytest.skip("cupy finds no usable GPU", allow_module_level=True)

from oar import fluid  # noqa: E402


def _train(place, optimizer, steps=5):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 8)).astype("float32")
    y = rng.standard_normal((32, 1)).astype("float32")
    main, startup = fluid.Program(), fluid.Program()
    main.random_seed = startup.random_seed = 1
    with fluid.program_guard(main, startup):
        xv = fluid.data("x", [None, 8], "float32")
        yv = fluid.data("y", [None, 1], "float32")
        h = fluid.layers.fc(xv, 16, act="relu")
        loss = fluid.layers.mean(fluid.layers.square_error_cost(fluid.layers.fc(h, 1), yv))
        optimizer().minimize(loss)
    exe, scope = fluid.Executor(place), fluid.Scope()
    exe.run(startup, scope=scope)
    return [
        float(exe.run(main, feed={"x": x, "y": y}, fetch_list=[loss], scope=scope)[0])
        for _ in range(steps)
    ]


@pytest.mark.parametrize(
    "optimizer",
    [
        lambda: fluid.optimizer.SGD(0.1),
        lambda: fluid.optimizer.Momentum(0.1, 0.9),
        lambda: fluid.optimizer.Adam(0.01),
    ],
    ids=["sgd", "momentum", "adam"],
)
def test_training_on_cuda_matches_cpu(optimizer):
    np.testing.assert_allclose(
        _train(fluid.CUDAPlace(0), optimizer), _train(fluid.CPUPlace(), optimizer), rtol=1e-4
    )


def test_copies_round_trip():
    from oar.plugins import registries

    dev = registries().devices.get("cuda")
    a = np.arange(12, dtype="float32").reshape(3, 4)
    d = dev.from_host(a, 0)
    assert isinstance(d, cupy.ndarray)
    np.testing.assert_array_equal(dev.to_host(d), a)


def test_dygraph_on_cuda():
    with fluid.dygraph.guard(fluid.CUDAPlace(0)):
        x = fluid.dygraph.to_variable(np.ones((2, 3), "float32"))
        y = fluid.layers.relu(x * 2.0)
        assert y.numpy().tolist() == [[2.0] * 3] * 2
