"""``fluid.layers`` functions accept eager variables: the same results as the static graph, and a
backward pass through them."""

import numpy as np
import pytest
from oar import fluid

L = fluid.layers
_rng = np.random.default_rng(0)
X = _rng.uniform(-1, 1, (2, 3)).astype("float32")
IMG = _rng.uniform(-1, 1, (2, 3, 8, 8)).astype("float32")
LAB = np.array([[0], [2]], "int64")
IDS = np.array([[1], [3]], "int64")

# name -> (function of the input variables, inputs); parameter-free so both modes compute the same
CASES = {
    "relu": (lambda x: L.relu(x), [X]),
    "softmax": (lambda x: L.softmax(x), [X]),
    "reshape": (lambda x: L.reshape(x, [3, 2]), [X]),
    "transpose": (lambda x: L.transpose(x, [1, 0]), [X]),
    "concat": (lambda x: L.concat([x, x], axis=0), [X]),
    "split": (lambda x: L.split(x, 3, dim=1)[1], [X]),
    "reduce_sum": (lambda x: L.reduce_sum(x, dim=1), [X]),
    "reduce_max": (lambda x: L.reduce_max(x, dim=0), [X]),
    "matmul": (lambda x: L.matmul(x, x, transpose_y=True), [X]),
    "cross_entropy": (lambda x, y: L.cross_entropy(L.softmax(x), y), [X, LAB]),
    "softmax_with_cross_entropy": (lambda x, y: L.softmax_with_cross_entropy(x, y), [X, LAB]),
    "topk": (lambda x: L.topk(x, 2)[0], [X]),
    "gather": (lambda x, i: L.gather(x, i), [X, np.array([1, 0], "int64")]),
    "unsqueeze": (lambda x: L.unsqueeze(x, [0]), [X]),
    "stack": (lambda x: L.stack([x, x]), [X]),
    "expand": (lambda x: L.expand(x, [2, 1]), [X]),
    "scale": (lambda x: L.scale(x, 2.0, 1.0), [X]),
    "clip": (lambda x: L.clip(x, -0.5, 0.5), [X]),
    "pow": (lambda x: L.pow(x, 2.0), [X]),
    "one_hot": (lambda i: L.one_hot(i, 5), [IDS]),
    "pool2d": (lambda x: L.pool2d(x, 2, pool_stride=2), [IMG]),
    "accuracy": (lambda x, y: L.accuracy(L.softmax(x), y), [X, LAB]),
    "slice": (lambda x: L.slice(x, axes=[1], starts=[0], ends=[2]), [X]),
    "flatten": (lambda x: L.flatten(x), [IMG]),
    "pad": (lambda x: L.pad(x, [0, 0, 1, 1]), [X]),
    "l2_normalize": (lambda x: L.l2_normalize(x, axis=1), [X]),
    "cumsum": (lambda x: L.cumsum(x, axis=1), [X]),
    "operators": (lambda x: (x * 2.0 - x / 3.0) ** 2.0 + 1.0, [X]),
}


def _static(fn, arrays):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        vs = [
            fluid.data(name=f"in{i}", shape=a.shape, dtype=a.dtype.name)
            for i, a in enumerate(arrays)
        ]
        out = fn(*vs)
    exe = fluid.Executor(fluid.CPUPlace())
    return exe.run(
        main,
        feed={f"in{i}": a for i, a in enumerate(arrays)},
        fetch_list=[out],
        scope=fluid.Scope(),
    )[0]


@pytest.mark.parametrize("name", sorted(CASES))
def test_layer_function_in_dygraph(name):
    fn, arrays = CASES[name]
    try:
        want = _static(fn, arrays)
    except AttributeError as exc:
        pytest.skip(f"layer not installed: {exc}")
    with fluid.dygraph.guard():
        vs = [fluid.dygraph.to_variable(a) for a in arrays]
        for v in vs:
            if v.dtype == "float32":
                v.stop_gradient = False
        out = fn(*vs)
        np.testing.assert_allclose(out.numpy(), want, rtol=1e-6, atol=1e-6)
        if not out.stop_gradient:
            L.mean(out).backward()
            assert vs[0].gradient() is not None and vs[0].gradient().shape == arrays[0].shape


def test_layers_with_parameters_build_and_backprop():
    with fluid.dygraph.guard():
        x, img = fluid.dygraph.to_variable(X), fluid.dygraph.to_variable(IMG)
        ids = fluid.dygraph.to_variable(IDS)
        for out in (
            L.fc(x, 4),
            L.conv2d(img, 4, 3),
            L.batch_norm(img),
            L.layer_norm(x),
            L.embedding(ids, size=[5, 4]),
            L.prelu(x, "all"),
        ):
            assert not out.stop_gradient
            L.mean(out).backward()
