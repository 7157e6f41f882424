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
    # the same start on both: cupy's generator draws other numbers than numpy's, so the
    # parameters are made on the host and the cuda executor moves them to the GPU
    exe, scope = fluid.Executor(place), fluid.Scope()
    fluid.Executor(fluid.CPUPlace()).run(startup, scope=scope)
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


def test_a_conv_net_initialises_and_trains_on_cuda():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((16, 1, 12, 12)).astype("float32")
    y = rng.integers(0, 10, (16, 1)).astype("int64")
    main, startup = fluid.Program(), fluid.Program()
    main.random_seed = startup.random_seed = 2
    with fluid.program_guard(main, startup):
        img = fluid.data("img", [None, 1, 12, 12], "float32")
        label = fluid.data("label", [None, 1], "int64")
        c = fluid.nets.simple_img_conv_pool(img, 8, 3, 2, 2, act="relu")  # Normal init
        c = fluid.layers.batch_norm(c)
        pred = fluid.layers.fc(fluid.layers.dropout(c, 0.1), 10, act="softmax")
        loss = fluid.layers.mean(fluid.layers.cross_entropy(pred, label))
        fluid.optimizer.Adam(0.01).minimize(loss)
    exe, scope = fluid.Executor(fluid.CUDAPlace(0)), fluid.Scope()
    exe.run(startup, scope=scope)
    conv_w = scope.find_var(main.global_block().all_parameters()[0].name).get_tensor()
    assert isinstance(conv_w._array, cupy.ndarray)
    w = np.array(conv_w)
    assert abs(w.mean()) < 0.2 and 0.05 < w.std() < 1.5
    losses = [
        float(exe.run(main, feed={"img": x, "label": y}, fetch_list=[loss], scope=scope)[0])
        for _ in range(8)
    ]
    assert np.all(np.isfinite(losses)) and losses[-1] < losses[0]


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
        assert isinstance(x.value(), cupy.ndarray)
        y = fluid.layers.relu(x * 2.0)
        assert y.numpy().tolist() == [[2.0] * 3] * 2


def _dygraph_train(place):
    with fluid.dygraph.guard(place):
        lin = fluid.dygraph.Linear(8, 4, act="relu")
        lin.weight.set_value(np.linspace(-1, 1, 32, dtype="float32").reshape(8, 4))
        lin.bias.set_value(np.full(4, 0.1, "float32"))
        opt = fluid.optimizer.Adam(0.01, parameter_list=lin.parameters())
        x = fluid.dygraph.to_variable(np.linspace(0, 1, 24, dtype="float32").reshape(3, 8))
        out = []
        for _ in range(4):
            loss = fluid.layers.mean(lin(x))
            loss.backward()
            opt.minimize(loss)
            lin.clear_gradients()
            out.append(float(loss.numpy()))
        return out, type(lin.weight.value())


def test_dygraph_training_on_cuda_matches_cpu():
    got, weight_type = _dygraph_train(fluid.CUDAPlace(0))
    assert weight_type is cupy.ndarray
    np.testing.assert_allclose(got, _dygraph_train(fluid.CPUPlace())[0], rtol=1e-5)


class _ConvNet(fluid.dygraph.Layer):
    def __init__(self):
        super().__init__()
        self.conv = fluid.dygraph.Conv2D(1, 6, 3, act="relu")
        self.bn = fluid.dygraph.BatchNorm(6)
        self.pool = fluid.dygraph.Pool2D(2, "max", 2)
        self.fc = fluid.dygraph.Linear(6 * 5 * 5, 10, act="softmax")

    def forward(self, x):
        h = self.pool(self.bn(self.conv(x)))
        return self.fc(fluid.layers.reshape(h, [h.shape[0], -1]))


def _dygraph_cnn(place, state):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((8, 1, 12, 12)).astype("float32")
    y = rng.integers(0, 10, (8, 1)).astype("int64")
    with fluid.dygraph.guard(place):
        net = _ConvNet()
        if state is None:
            state = {k: v.numpy() for k, v in net.state_dict().items()}
        net.set_dict(state)
        opt = fluid.optimizer.Momentum(0.05, 0.9, parameter_list=net.parameters())
        losses = []
        for _ in range(4):
            pred = net(fluid.dygraph.to_variable(x))
            loss = fluid.layers.mean(fluid.layers.cross_entropy(pred, fluid.dygraph.to_variable(y)))
            loss.backward()
            opt.minimize(loss)
            net.clear_gradients()
            losses.append(float(loss.numpy()))
        return losses, state, type(net.conv.weight.value())


def test_dygraph_cnn_on_cuda_matches_cpu():
    cpu, state, _ = _dygraph_cnn(fluid.CPUPlace(), None)
    got, _, weight_type = _dygraph_cnn(fluid.CUDAPlace(0), state)
    assert weight_type is cupy.ndarray
    np.testing.assert_allclose(got, cpu, rtol=1e-4)
    assert cpu[-1] < cpu[0]
