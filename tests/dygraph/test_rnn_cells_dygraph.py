"""The 1.8 cell API and contrib units in dygraph: the same numbers (outputs and gradients) as
Fluid 1.8.5's static programs (golden data in tests/layers/data/fluid18_rnn_cells.npz), with
the parameters set to the generator's values."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from oar import fluid

DATA = Path(__file__).resolve().parents[1] / "layers" / "data"
_spec = importlib.util.spec_from_file_location("fluid18_rnn_cells", DATA / "fluid18_rnn_cells.py")
GEN = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(GEN)
GOLDEN = np.load(DATA / "fluid18_rnn_cells.npz")
B, T, D, H, V = GEN.B, GEN.T, GEN.D, GEN.H, GEN.V
L = fluid.layers


def _golden(name, i):
    return GOLDEN[f"{name}_{i}"]


def _close(got, name, i):
    np.testing.assert_allclose(got, _golden(name, i), rtol=2e-4, atol=2e-5, err_msg=f"{name} {i}")


def _loss(outs):
    terms = [L.reduce_sum(L.scale(o, scale=0.5 + 0.25 * k)) for k, o in enumerate(outs)]
    return L.sums(terms)


def _set(params, rng):
    for p in params:
        p.set_value(rng.uniform(-0.6, 0.6, p.shape).astype("float32"))


def test_rnn_lstm_cell():
    rng = np.random.RandomState(GEN.CONFIGS.index("rnn_lstm"))
    xv = rng.uniform(-1, 1, (B, T, D)).astype("float32")
    with fluid.dygraph.guard():
        cell = L.LSTMCell(H, forget_bias=0.5)
        x = fluid.dygraph.to_variable(xv)
        x.stop_gradient = False
        sl = fluid.dygraph.to_variable(GEN.LENS)
        L.rnn(cell, x, sequence_length=sl)  # makes the parameters
        params = cell.lstm_unit.parameters()
        _set(params, rng)
        out, (h, c) = L.rnn(cell, x, sequence_length=sl)
        _loss([out, h, c]).backward()
        for i, v in enumerate([out, h, c, x] + params):
            _close(v.numpy() if i < 3 else v.gradient(), "rnn_lstm", i)


@pytest.mark.parametrize("name", ["train_helper", "beam", "greedy"])
def test_decoders(name):
    """TrainingHelper (with gradients), beam search and greedy decoding, one embedding table
    and one output layer shared by every step."""
    rng = np.random.RandomState(GEN.CONFIGS.index(name))
    with fluid.dygraph.guard():
        feeds = {}
        if name == "train_helper":
            feeds["ids"] = rng.randint(0, V, (B, T)).astype("int64")
        h0v = rng.uniform(-1, 1, (B, H)).astype("float32")
        emb = fluid.dygraph.Embedding([V, D])

        def embed(ids):  # ids [B, T] -> [B, T, D] (lookup_table_v2, as Fluid 1.8)
            return emb(ids)

        out_fc = fluid.dygraph.Linear(H, V)
        cell = L.GRUCell(H)
        h0 = fluid.dygraph.to_variable(h0v)
        h0.stop_gradient = False

        def run():
            if name == "train_helper":
                ids = fluid.dygraph.to_variable(feeds["ids"])
                helper = L.TrainingHelper(embed(ids), fluid.dygraph.to_variable(GEN.LENS))
                dec = L.BasicDecoder(cell, helper, output_fn=out_fc)
                res, state, lengths = L.dynamic_decode(
                    dec, inits=h0, impute_finished=True, return_length=True
                )
                return [res.cell_outputs, state, res.sample_ids, lengths]
            if name == "beam":
                dec = L.BeamSearchDecoder(cell, 0, 1, 3, embedding_fn=embed, output_fn=out_fc)
                ids, state, lengths = L.dynamic_decode(
                    dec, inits=h0, max_step_num=4, return_length=True
                )
                return [ids, state.log_probs, lengths]
            start = L.fill_constant_batch_size_like(h0, [-1], "int64", 0)
            helper = L.GreedyEmbeddingHelper(embed, start, end_token=1)
            dec = L.BasicDecoder(cell, helper, output_fn=out_fc)
            res, state = L.dynamic_decode(dec, inits=h0, max_step_num=4)
            return [res.cell_outputs, res.sample_ids, state]

        run()
        # the static program's creation order: embedding, the GRU's four, the output layer
        params = [emb.weight] + cell.gru_unit.parameters() + [out_fc.weight, out_fc.bias]
        _set(params, rng)
        outs = run()
        for i, o in enumerate(outs):
            if (name, i) not in {("beam", 2)}:  # see tests/layers/test_rnn_cells.py
                _close(o.numpy(), name, i)
        if name == "train_helper":
            _loss([o for o in outs if o.dtype == outs[0].dtype]).backward()
            for i, v in enumerate([h0] + params, start=len(outs)):
                _close(v.gradient(), name, i)


def test_contrib_units_are_layers_with_fluids_numbers():
    from oar.fluid.contrib import BasicGRUUnit, BasicLSTMUnit

    rng = np.random.RandomState(0)
    xv, hv, cv = (rng.randn(2, n).astype("float32") for n in (3, 4, 4))
    with fluid.dygraph.guard():
        x, h, c = (fluid.dygraph.to_variable(v) for v in (xv, hv, cv))
        lstm = BasicLSTMUnit("lstm", 4, forget_bias=0.7)
        new_h, new_c = lstm(x, h, c)
        w, b = (p.numpy() for p in lstm.parameters())
        assert w.shape == (7, 16) and b.shape == (16,)
        sig = lambda z: 1 / (1 + np.exp(-z))
        i, j, f, o = np.split(np.concatenate([xv, hv], 1) @ w + b, 4, 1)
        want_c = cv * sig(f + 0.7) + sig(i) * np.tanh(j)
        np.testing.assert_allclose(new_c.numpy(), want_c, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(new_h.numpy(), np.tanh(want_c) * sig(o), rtol=1e-5, atol=1e-6)
        gru = BasicGRUUnit("gru", 4)
        out = gru(x, h)
        assert [p.shape for p in gru.parameters()] == [[7, 8], [7, 4], [8], [4]]
        gw, cw, gb, cb = (p.numpy() for p in gru.parameters())
        r, u = np.split(sig(np.concatenate([xv, hv], 1) @ gw + gb), 2, 1)
        cand = np.tanh(np.concatenate([xv, r * hv], 1) @ cw + cb)
        np.testing.assert_allclose(out.numpy(), u * hv + (1 - u) * cand, rtol=1e-5, atol=1e-6)


def test_step_functions_building_different_layers_are_refused():
    sizes = iter([5, 6, 7])

    class Odd(L.RNNCell):
        def call(self, inputs, states):
            out = L.fc(inputs, size=next(sizes))
            return out, states

        @property
        def state_shape(self):
            return [4]

    with fluid.dygraph.guard():
        x = fluid.dygraph.to_variable(np.ones([2, 3, 4], "float32"))
        with pytest.raises(TypeError, match=r"rnn: step 1 asks for a fc parameter of shape"):
            L.rnn(Odd(), x)
