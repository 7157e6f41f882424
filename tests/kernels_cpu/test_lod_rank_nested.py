"""DynamicRNN over a two-level LoD input: each step gives, per running top-level sequence,
its next sub-sequence (a 1-level LoD step), as in Fluid 1.8.5; outputs computed per sequence
come back with the top level's LoD, step inputs with both levels. Gradients through the
memory equal a numpy loop."""

from __future__ import annotations

import numpy as np
import pytest
from oar import fluid

layers = fluid.layers
TOP, SUB = [2, 0, 3, 1], [2, 3, 1, 2, 2, 1]  # 4 sequences of 6 sub-sequences of 11 rows


@pytest.fixture(autouse=True)
def _own_names():
    with fluid.unique_name.guard():
        yield


def _numpy(x, w, h0):
    """(per-sequence outputs in LoD order, d loss / d x, d loss / d w) of the model below."""
    sub_start = np.concatenate([[0], np.cumsum(SUB)])
    top_start = np.concatenate([[0], np.cumsum(TOP)])
    outs, grads, gw = [], np.zeros_like(x), np.zeros_like(w)
    for s in range(len(TOP)):
        subs = range(top_start[s], top_start[s + 1])
        pooled = [x[sub_start[j] : sub_start[j + 1]].sum(0) for j in subs]
        hs, h = [], h0[s]
        for p in pooled:
            h = np.tanh(p @ w + h)
            hs.append(h)
        outs += hs
        total = np.sum(hs, axis=0) if hs else np.zeros(w.shape[1], "float32")
        dh_next = np.zeros_like(total)
        for k in reversed(range(len(hs))):  # loss = sum over sequences of |sum_t h_t|^2
            dz = (2 * total + dh_next) * (1 - hs[k] ** 2)
            j = list(subs)[k]
            grads[sub_start[j] : sub_start[j + 1]] += dz @ w.T
            gw += np.outer(pooled[k], dz)
            dh_next = dz
    return np.array(outs), grads, gw


@pytest.mark.parametrize("boot", ["shape", "init"])
def test_dynamic_rnn_over_a_two_level_lod_input(boot):
    rng = np.random.RandomState(0)
    x = rng.uniform(-1, 1, (sum(SUB), 3)).astype("float32")
    w = rng.uniform(-0.5, 0.5, (3, 2)).astype("float32")
    h0 = rng.uniform(-1, 1, (len(TOP), 2)).astype("float32") if boot == "init" else None
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        xv = fluid.data("x", [None, 3], "float32", lod_level=2)
        xv.stop_gradient = False
        h0v = fluid.data("h0", [None, 2], "float32") if boot == "init" else None
        drnn = layers.DynamicRNN()
        with drnn.block():
            words = drnn.step_input(xv)  # one sub-sequence per running sequence
            pooled = layers.sequence_pool(words, "sum")
            if boot == "init":  # one row per sequence, in the input's order
                mem = drnn.memory(init=h0v, need_reorder=True)
            else:
                mem = drnn.memory(shape=[2], value=0.0)
            h = layers.tanh(
                layers.fc(pooled, 2, param_attr=fluid.ParamAttr(name="w"), bias_attr=False) + mem
            )
            drnn.update_memory(mem, h)
            drnn.output(h, words)
        out, words_out = drnn()
        total = layers.sequence_pool(out, "sum")
        loss = layers.reduce_sum(layers.square(total))
        gx, gw = fluid.gradients(loss, [xv, main.global_block().var("w")])
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(start, scope=scope)
    scope.find_var("w").get_tensor().set(w, fluid.CPUPlace())
    feed = {"x": fluid.create_lod_tensor(x, [TOP, SUB], fluid.CPUPlace())}
    if boot == "init":
        feed["h0"] = h0
    got = exe.run(main, feed, fetch_list=[out, words_out, gx, gw], scope=scope, return_numpy=False)
    want_out, want_gx, want_gw = _numpy(
        x, w, np.zeros((len(TOP), 2), "float32") if h0 is None else h0
    )
    assert got[0].recursive_sequence_lengths() == [TOP]
    np.testing.assert_allclose(np.array(got[0]), want_out, rtol=1e-5, atol=1e-6)
    assert got[1].recursive_sequence_lengths() == [TOP, SUB]
    np.testing.assert_array_equal(np.array(got[1]), x)
    np.testing.assert_allclose(np.array(got[2]), want_gx, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.array(got[3]), want_gw, rtol=1e-4, atol=1e-5)
