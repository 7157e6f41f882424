"""The 1.8 cell API (rnn, LSTMCell, GRUCell, decoders, helpers) and contrib basic_lstm /
basic_gru against the numbers Fluid 1.8.5 gives (golden data: data/fluid18_rnn_cells.py)."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from oar import fluid

DATA = Path(__file__).parent / "data"
_spec = importlib.util.spec_from_file_location("fluid18_rnn_cells", DATA / "fluid18_rnn_cells.py")
GEN = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(GEN)
GOLDEN = np.load(DATA / "fluid18_rnn_cells.npz")
# Fluid 1.8.5's static BeamSearchDecoder returns lengths that do not belong to the final
# beams (e.g. 2 for a beam that emitted end_id at step 0 and 1 for one that never did);
# oar's are the lengths of the beams it returns (test_beam_lengths_count_up_to_end below)
DIFFERS = {("beam", 2)}


@pytest.mark.parametrize("name", GEN.CONFIGS)
def test_static_graph_equals_fluid_1_8_5(name):
    got = GEN.run(fluid, name)
    want = [
        GOLDEN[f"{name}_{i}"]
        for i in range(
            sum(k.startswith(name + "_") and k[len(name) + 1 :].isdigit() for k in GOLDEN.files)
        )
    ]
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        if (name, i) in DIFFERS:
            continue
        assert g.shape == w.shape, f"{name} fetch {i}: shape {g.shape} != {w.shape}"
        np.testing.assert_allclose(g, w, rtol=2e-4, atol=2e-5, err_msg=f"{name} fetch {i}")


def test_beam_lengths_count_up_to_end():
    ids, _, lengths = GEN.run(fluid, "beam")
    # ids [batch, time, beam]: a beam's length is its steps up to and including its first end
    is_end = ids == 1
    first_end = np.where(is_end.any(axis=1), is_end.argmax(axis=1) + 1, ids.shape[1])
    np.testing.assert_array_equal(lengths, first_end)


def _unknown_time_rnn(steps, unrolled):
    """rnn over [batch, time unknown, 3] (While loop) or a known time (the Python-unrolled
    reference); returns outputs, final state and the gradients of x and the parameters."""
    import importlib

    rnn_mod = importlib.import_module("oar.layers.rnn")
    main, startup = fluid.Program(), fluid.Program()
    L = fluid.layers
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        x = fluid.data("x", [2, steps if unrolled else None, 3], "float32")
        x.stop_gradient = False
        sl = fluid.data("sl", [2], "int64")
        cell = L.GRUCell(4, param_attr=fluid.ParamAttr(initializer=fluid.initializer.Constant(0.3)))
        init = cell.get_initial_states(batch_ref=x)
        run = rnn_mod._rnn_eager if unrolled else rnn_mod.rnn
        out, h = run(cell, x, init, sl, False, True)
        loss = L.reduce_sum(L.elementwise_mul(out, out)) + L.reduce_sum(h)
        fluid.backward.append_backward(loss)
    params = [p.name for p in main.global_block().all_parameters()]
    assert len(params) == 4  # the cell's layers are built once, not once per step
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    rng = np.random.default_rng(3)
    feed = {"x": rng.uniform(-1, 1, (2, steps, 3)).astype("float32"),
            "sl": np.array([steps, steps - 2], "int64")}  # fmt: skip
    fetch = [out, h, "x@GRAD"] + [p + "@GRAD" for p in params]
    return exe.run(main, feed=feed, fetch_list=fetch, scope=scope)


@pytest.mark.parametrize("steps", [3, 5])
def test_static_rnn_is_a_while_loop_over_a_time_known_at_run_time(steps):
    got = _unknown_time_rnn(steps, unrolled=False)
    want = _unknown_time_rnn(steps, unrolled=True)
    assert got[0].shape == (2, steps, 4)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_static_dynamic_decode_runs_a_data_dependent_number_of_steps():
    L = fluid.layers
    V, H = 5, 3
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        h0 = fluid.data("h0", [None, H], "float32")
        prefer = fluid.data("prefer", [V], "float32")  # the logits: the fed data decides
        start = L.fill_constant_batch_size_like(h0, [-1], "int64", 0)

        def embed(ids):
            return fluid.embedding(ids, size=[V, H], param_attr=fluid.ParamAttr(name="emb"))

        def logits(x):
            return L.elementwise_add(L.scale(x, 0.0), prefer)

        helper = L.GreedyEmbeddingHelper(embed, start, end_token=1)
        dec = L.BasicDecoder(L.GRUCell(H), helper, output_fn=lambda x: logits(L.fc(x, V)))
        res, _, lengths = L.dynamic_decode(dec, inits=h0, max_step_num=6, return_length=True)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    h = np.zeros([2, H], "float32")
    for end_at_once, steps in ((True, 1), (False, 7)):
        prefer_v = np.eye(V, dtype="float32")[1 if end_at_once else 3] * 5
        ids, n = exe.run(
            main,
            feed={"h0": h, "prefer": prefer_v},
            fetch_list=[res.sample_ids, lengths],
            scope=scope,
        )
        assert ids.shape == (2, steps)
        np.testing.assert_array_equal(ids, np.full((2, steps), 1 if end_at_once else 3))
        np.testing.assert_array_equal(n, [steps, steps] if not end_at_once else [1, 1])


def test_split_records_a_non_negative_axis():
    """Fluid's split layer turns dim=-1 into rank - 1 (Fluid 1.8.5's split kernel never returns
    on axis -1): a GRUCell program exported in Fluid's format must carry the positive axis."""
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        x = fluid.data("x", [2, 3, 4], "float32")
        fluid.layers.rnn(fluid.layers.GRUCell(5), x)
        fluid.layers.split(x, 3, dim=-2)
    axes = [op.attrs["axis"] for b in main.blocks for op in b.ops if op.type == "split"]
    assert axes and all(a >= 0 for a in axes), axes
    assert axes[-1] == 1
