"""Rank tables and DynamicRNN: sequences of different lengths through a While loop."""

from __future__ import annotations

import numpy as np
import pytest
from oar import fluid

layers = fluid.layers


@pytest.fixture(autouse=True)
def _own_names():
    """Fresh unique-name counters per test: the names (and so the initial values) of other
    modules' parameters do not depend on whether these tests ran first."""
    with fluid.unique_name.guard():
        yield


LENS = [2, 4, 0, 3]


def _lod_input(d: int = 3, seed: int = 0):
    x = np.random.RandomState(seed).randn(sum(LENS), d).astype("float32") * 0.5
    return x, fluid.create_lod_tensor(x, [LENS], fluid.CPUPlace())


def test_rank_table_views_round_trip():
    from oar.layers import lod_rank

    x, feed = _lod_input()
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        xv = fluid.data("x", [-1, 3], "float32", lod_level=1)
        table = lod_rank.lod_rank_table(xv)
        n = lod_rank.max_sequence_len(table)
        arr = lod_rank.lod_tensor_to_array(xv, table)
        back = lod_rank.array_to_lod_tensor(arr, table)
        first = layers.array_read(arr, layers.fill_constant([1], "int64", 3))
        per_seq = layers.fill_constant([4, 2], "float32", 0.0) + layers.assign(
            np.arange(8, dtype="float32").reshape(4, 2)
        )
        ordered = layers.reorder_lod_tensor_by_rank(per_seq, table)
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(start)
    got = exe.run(main, {"x": feed}, fetch_list=[n, back, first, ordered], return_numpy=False)
    assert np.array(got[0]).tolist() == [4]
    np.testing.assert_array_equal(np.array(got[1]), x)
    assert got[1].recursive_sequence_lengths() == [LENS]
    np.testing.assert_array_equal(np.array(got[2]), x[[2 + 3]])  # only the 4-long one at t=3
    np.testing.assert_array_equal(np.array(got[3]), np.arange(8).reshape(4, 2)[[1, 3, 0, 2]])


def test_dynamic_rnn_outputs_and_gradients_equal_numpy():
    D, H = 3, 2
    x, feed = _lod_input(D)
    rng = np.random.RandomState(5)
    h0 = rng.randn(len(LENS), H).astype("float32")
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        xv = fluid.data("x", [-1, D], "float32", lod_level=1)
        xv.stop_gradient = False
        hv = fluid.data("h0", [len(LENS), H], "float32")
        hv.stop_gradient = False
        u = layers.create_parameter([D, H], "float32", name="drnn_u")
        w = layers.create_parameter([H, H], "float32", name="drnn_w")
        rnn = layers.DynamicRNN()
        with rnn.block():
            xt = rnn.step_input(xv)
            prev = rnn.memory(init=hv, need_reorder=True)
            h = layers.tanh(layers.matmul(xt, u) + layers.matmul(prev, w))
            rnn.update_memory(prev, h)
            rnn.output(h)
        out = rnn()
        loss = layers.reduce_sum(out * out)
        grads = fluid.gradients([loss], [u, w, xv, hv])
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(start, scope=scope)
    uv = np.array(scope.find_var("drnn_u").get_tensor()).astype("float64")
    wv = np.array(scope.find_var("drnn_w").get_tensor()).astype("float64")
    got = exe.run(main, {"x": feed, "h0": h0}, fetch_list=[out] + grads, scope=scope)
    offs = np.cumsum([0] + LENS)
    want = np.zeros((sum(LENS), H))
    du, dw, dx, dh0 = (
        np.zeros_like(uv),
        np.zeros_like(wv),
        np.zeros((sum(LENS), D)),
        np.zeros_like(h0),
    )
    for s, n in enumerate(LENS):
        hs = [h0[s].astype("float64")]
        for t in range(n):
            hs.append(np.tanh(x[offs[s] + t] @ uv + hs[-1] @ wv))
            want[offs[s] + t] = hs[-1]
        dh = np.zeros(H)
        for t in reversed(range(n)):
            da = (dh + 2 * hs[t + 1]) * (1 - hs[t + 1] ** 2)
            du += np.outer(x[offs[s] + t], da)
            dw += np.outer(hs[t], da)
            dx[offs[s] + t] = da @ uv.T
            dh = da @ wv.T
        dh0[s] = dh
    np.testing.assert_allclose(got[0], want, rtol=1e-5, atol=1e-6)
    for g, ref in zip(got[1:], (du, dw, dx, dh0)):
        np.testing.assert_allclose(g, ref, rtol=1e-4, atol=1e-5)


def test_dynamic_rnn_memory_from_shape_and_errors():
    x, feed = _lod_input(2)
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        xv = fluid.data("x", [-1, 2], "float32", lod_level=1)
        rnn = layers.DynamicRNN()
        with rnn.block():
            xt = rnn.step_input(xv)
            prev = rnn.memory(shape=[2], value=1.0)
            s = prev + xt
            rnn.update_memory(prev, s)
            rnn.output(s)
        out = rnn()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(start)
    (o,) = exe.run(main, {"x": feed}, fetch_list=[out])
    offs = np.cumsum([0] + LENS)
    want = np.concatenate([1.0 + np.cumsum(x[a:b], axis=0) for a, b in zip(offs, offs[1:])])
    np.testing.assert_allclose(o, want, rtol=1e-6)
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        plain = fluid.data("p", [-1, 2], "float32")
        rnn = layers.DynamicRNN()
        with pytest.raises(TypeError, match=r"DynamicRNN.*LoD"):
            with rnn.block():
                rnn.step_input(plain)
