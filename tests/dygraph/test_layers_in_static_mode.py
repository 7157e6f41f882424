"""Dygraph layers built and called under ``program_guard`` (no ``dygraph.guard``): as in Fluid
1.8.5 they hold static parameters and append their ops to the program."""

import json
from pathlib import Path

import numpy as np
import pytest
from oar import fluid

dg = fluid.dygraph
GOLDEN = json.loads(
    (Path(__file__).parent / "data" / "fluid18_layers_in_static_mode.json").read_text()
)

CASES = {
    "Linear": (lambda: dg.Linear(4, 3, act="relu"), [None, 4], "float32"),
    "Conv2D": (
        lambda: dg.Conv2D(num_channels=2, num_filters=3, filter_size=3, padding=1),
        [None, 2, 5, 5],
        "float32",
    ),
    "Pool2D": (lambda: dg.Pool2D(pool_size=2, pool_stride=2), [None, 2, 4, 4], "float32"),
    "BatchNorm": (lambda: dg.BatchNorm(num_channels=3), [None, 3, 2, 2], "float32"),
    "Embedding": (lambda: dg.Embedding(size=[10, 3]), [None, 1], "int64"),
    "LayerNorm": (lambda: dg.LayerNorm(normalized_shape=[4]), [None, 4], "float32"),
}


def _feed(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    full = [2] + shape[1:]
    if dtype == "int64":
        return rng.integers(0, 10, full).astype("int64")
    return rng.uniform(-1, 1, full).astype(dtype)


@pytest.mark.parametrize("name", sorted(CASES))
def test_layer_called_on_a_static_variable_appends_its_ops(name):
    make, shape, dtype = CASES[name]
    want = GOLDEN[name]
    prog, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(prog, startup), fluid.unique_name.guard():
        layer = make()
        assert [p.name for p in prog.global_block().all_parameters()] == want["params"]
        assert len(startup.global_block().ops) == want["startup_ops"]
        x = fluid.data(name="x", shape=shape, dtype=dtype)
        out = layer(x)
    assert isinstance(out, fluid.Variable)
    assert list(out.shape) == want["out_shape"]
    assert out.name.rsplit("_", 1)[0] == want["out_name"].rsplit("_", 1)[0]  # <layer>_0.tmp
    scope = fluid.Scope()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup, scope=scope)
    xv = _feed(shape, dtype)
    (got,) = exe.run(prog, feed={"x": xv}, fetch_list=[out], scope=scope)
    # the same layer run eagerly on the same parameter values
    with dg.guard():
        with fluid.unique_name.guard():
            eager = make()
        for p, q in zip(eager.parameters(), layer.parameters()):
            p.set_value(np.array(scope.find_var(q.name).get_tensor()))
        ref = eager(dg.to_variable(xv)).numpy()
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)


class _Net(dg.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = dg.Linear(4, 8, act="tanh")
        self.fc2 = dg.Linear(8, 1)

    def forward(self, x):
        return self.fc2(fluid.layers.relu(self.fc1(x)))


def test_a_user_layer_trains_in_a_static_program():
    prog, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(prog, startup), fluid.unique_name.guard():
        net = _Net()
        x = fluid.data(name="x", shape=[None, 4], dtype="float32")
        y = fluid.data(name="y", shape=[None, 1], dtype="float32")
        loss = fluid.layers.mean(fluid.layers.square_error_cost(net(x), y))
        fluid.optimizer.SGD(0.1, parameter_list=net.parameters()).minimize(loss)
    assert [p.name for p in net.parameters()] == [
        "linear_0.w_0", "linear_0.b_0", "linear_1.w_0", "linear_1.b_0"
    ]  # fmt: skip
    scope = fluid.Scope()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup, scope=scope)
    rng = np.random.default_rng(1)
    xv = rng.uniform(-1, 1, (16, 4)).astype("float32")
    yv = xv.sum(1, keepdims=True).astype("float32")
    w0 = np.array(scope.find_var("linear_0.w_0").get_tensor())
    losses = [
        float(exe.run(prog, feed={"x": xv, "y": yv}, fetch_list=[loss], scope=scope)[0][0])
        for _ in range(20)
    ]
    assert losses[-1] < 0.5 * losses[0]
    assert not np.allclose(np.array(scope.find_var("linear_0.w_0").get_tensor()), w0)


def test_a_static_layer_refuses_a_wrong_input_naming_it():
    prog, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(prog, startup), fluid.unique_name.guard():
        lin = dg.Linear(4, 3)
        x = fluid.data(name="x5", shape=[None, 5], dtype="float32")
        with pytest.raises(ValueError, match="Linear: input 'x5' has shape .*input_dim"):
            lin(x)
