"""fluid.contrib helpers; expected values from Fluid 1.8.5 on the same inputs."""

from __future__ import annotations

import numpy as np
import pytest
from oar import fluid
from oar.errors import ArgumentError

C = fluid.contrib
XV = np.array([[-1, 2, -3, 4], [5, -6, 7, -8]], "float32")
YV = np.array([[1, 1, 1, 1], [-10, 2, 3, 4]], "float32")


def _run(build):
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        x = fluid.data("x", [None, 4])
        y = fluid.data("y", [None, 4])
        outs = build(x, y)
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(start)
    return exe.run(main, feed={"x": XV, "y": YV}, fetch_list=outs), main


def test_partial_and_fused_match_fluid():
    """Fluid 1.8.5 outputs for partial_concat/partial_sum(start_index=1, length=2) and
    fused_elemwise_activation with [add, relu], [relu, add], [scale, add] (scale=2)."""
    (a, b, c, d, e), _ = _run(
        lambda x, y: [
            C.partial_concat([x, y], start_index=1, length=2),
            C.partial_sum([x, y], start_index=1, length=2),
            C.fused_elemwise_activation(x, y, ["elementwise_add", "relu"]),
            C.fused_elemwise_activation(x, y, ["relu", "elementwise_add"]),
            C.fused_elemwise_activation(x, y, ["scale", "elementwise_add"], scale=2.0),
        ]
    )
    np.testing.assert_array_equal(a, [[2.0, -3.0, 1.0, 1.0], [-6.0, 7.0, 2.0, 3.0]])
    np.testing.assert_array_equal(b, [[3.0, -2.0], [-4.0, 10.0]])
    np.testing.assert_array_equal(c, [[0.0, 3.0, -2.0, 5.0], [5.0, -4.0, 10.0, -4.0]])
    np.testing.assert_array_equal(d, [[0.0, 3.0, 0.0, 5.0], [0.0, 0.0, 10.0, 0.0]])
    np.testing.assert_array_equal(e, [[0.0, 6.0, -4.0, 10.0], [-10.0, -8.0, 20.0, -8.0]])
    with pytest.raises(ArgumentError, match="functor_list"):
        _run(lambda x, y: [C.fused_elemwise_activation(x, y, ["relu", "tanh"])])
    with pytest.raises(ArgumentError, match="do not fit"):
        _run(lambda x, y: [C.partial_sum([x, y], start_index=3, length=2)])


def test_fused_embedding_seq_pool_sums_each_sequence():
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        ids = fluid.data("ids", [None, 1], "int64", lod_level=1)
        out = C.fused_embedding_seq_pool(
            ids,
            size=[10, 3],
            param_attr=fluid.ParamAttr(initializer=fluid.initializer.Constant(0.5)),
        )
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(start)
    t = fluid.create_lod_tensor(np.array([[1], [2], [3]], "int64"), [[2, 1]], fluid.CPUPlace())
    (got,) = exe.run(main, feed={"ids": t}, fetch_list=[out])
    np.testing.assert_allclose(got, [[1.0] * 3, [0.5] * 3])


def test_statistics(capsys):
    _, main = _run(lambda x, y: [fluid.layers.relu(fluid.layers.fc(x, 3))])
    uni, adj = C.op_freq_statistic(main)
    assert uni == {"mul": 1, "elementwise_add": 1, "relu": 1}
    assert adj == {"mul->elementwise_add": 1, "elementwise_add->relu": 1}
    low, high, unit = C.memory_usage(main, batch_size=10)
    assert unit in ("B", "KB") and 0 < low < high
    params, flops = C.model_stat.summary(main)
    assert params == 4 * 3 and flops == 2 * 4 * 3 + 3 + 3
    assert "Total PARAMs: 12" in capsys.readouterr().out


def test_ctr_metric_bundle_accumulates_as_fluid():
    """Fluid 1.8.5, p=[.2, .6, .9], label=[0, 1, 1], two runs."""
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        p = fluid.data("p", [None, 1])
        label = fluid.data("l", [None, 1])
        outs = C.ctr_metric_bundle(p, label)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    feed = {
        "p": np.array([[0.2], [0.6], [0.9]], "float32"),
        "l": np.array([[0.0], [1.0], [1.0]], "float32"),
    }
    with fluid.scope_guard(scope):
        exe.run(start)
        first = [float(v[0]) for v in exe.run(main, feed=feed, fetch_list=list(outs))]
        second = [float(v[0]) for v in exe.run(main, feed=feed, fetch_list=list(outs))]
    expected = [0.21, 0.7, 1.7, 1.9064398, 2.0, 3.0]
    np.testing.assert_allclose(first, expected, rtol=1e-5)
    np.testing.assert_allclose(second, [2 * v for v in expected], rtol=1e-5)
