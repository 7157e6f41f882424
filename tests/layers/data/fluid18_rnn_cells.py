"""The 1.8 cell API and contrib rnn_impl in the real Fluid 1.8.5, as golden data.

``run(fluid, name)`` builds config ``name`` in a fresh static program, sets every parameter
(in creation order) to seeded random values, runs forward and backward once and returns
[outputs..., d loss / d input..., d loss / d parameter...]. Regenerate with the oracle:
``$FLUID18_PYTHON tests/layers/data/fluid18_rnn_cells.py``
(writes ``fluid18_rnn_cells.npz``, keys ``<config>_<i>``).
"""

import os

import numpy as np

B, T, D, H, V = 3, 4, 5, 4, 7
# decoding is checked forward only (Fluid 1.8.5's gather_nd_grad fails inside beam search)
FORWARD_ONLY = ("beam", "greedy")
LENS = np.array([4, 2, 3], "int64")
CONFIGS = [
    "basic_lstm", "basic_gru", "rnn_lstm", "rnn_gru_reverse", "train_helper", "beam", "greedy",
]  # fmt: skip


def _emb(fluid, ids):
    return fluid.embedding(ids, size=[V, D], param_attr=fluid.ParamAttr(name="emb"))


def _out_fc(fluid):
    return lambda x: fluid.layers.fc(x, size=V, num_flatten_dims=len(x.shape) - 1)


def _build(fluid, name, rng):
    L = fluid.layers
    feed, outs, wrt = {}, [], []

    def data(key, shape, dtype="float32", value=None, grad=True):
        v = fluid.data(key, shape, dtype)
        if grad:
            v.stop_gradient = False
            wrt.append(v)
        feed[key] = (
            rng.uniform(-1, 1, [d if d > 0 else B for d in shape]).astype(dtype)
            if value is None
            else value
        )
        return v

    if name == "basic_lstm":
        x = data("x", [B, T, D])
        h0, c0 = data("h0", [4, B, H]), data("c0", [4, B, H])
        sl = data("sl", [B], "int64", LENS, grad=False)
        out, h, c = fluid.contrib.basic_lstm(
            x, h0, c0, H, num_layers=2, sequence_length=sl, bidirectional=True
        )
        outs = [out, h, c]
    elif name == "basic_gru":
        x = data("x", [T, B, D])
        out, h = fluid.contrib.basic_gru(x, None, H, batch_first=False)
        outs = [out, h]
    elif name == "rnn_lstm":
        x = data("x", [B, T, D])
        sl = data("sl", [B], "int64", LENS, grad=False)
        out, (h, c) = L.rnn(L.LSTMCell(H, forget_bias=0.5), x, sequence_length=sl)
        outs = [out, h, c]
    elif name == "rnn_gru_reverse":
        x = data("x", [T, B, D])
        h0 = data("h0", [B, H])
        sl = data("sl", [B], "int64", LENS, grad=False)
        out, h = L.rnn(L.GRUCell(H), x, h0, sequence_length=sl, time_major=True, is_reverse=True)
        outs = [out, h]
    elif name == "train_helper":
        ids = data("ids", [B, T], "int64", rng.randint(0, V, (B, T)).astype("int64"), grad=False)
        sl = data("sl", [B], "int64", LENS, grad=False)
        h0 = data("h0", [B, H])
        helper = L.TrainingHelper(_emb(fluid, ids), sl)
        dec = L.BasicDecoder(L.GRUCell(H), helper, output_fn=_out_fc(fluid))
        res, state, lengths = L.dynamic_decode(
            dec, inits=h0, impute_finished=True, return_length=True
        )
        outs = [res.cell_outputs, state, res.sample_ids, lengths]
    elif name in ("beam", "greedy"):
        h0 = data("h0", [-1, H])  # Fluid 1.8.5's beam search needs the batch unknown
        cell = L.GRUCell(H)
        if name == "beam":
            dec = L.BeamSearchDecoder(
                cell, start_token=0, end_token=1, beam_size=3,
                embedding_fn=lambda i: _emb(fluid, i), output_fn=_out_fc(fluid),
            )  # fmt: skip
            ids, state, lengths = L.dynamic_decode(
                dec, inits=h0, max_step_num=4, return_length=True
            )
            outs = [ids, state.log_probs, lengths]
        else:
            start = L.fill_constant_batch_size_like(h0, [-1], "int64", 0)
            helper = L.GreedyEmbeddingHelper(lambda i: _emb(fluid, i), start, end_token=1)
            dec = L.BasicDecoder(cell, helper, output_fn=_out_fc(fluid))
            res, state = L.dynamic_decode(dec, inits=h0, max_step_num=4)
            outs = [res.cell_outputs, res.sample_ids, state]
    return feed, outs, wrt


def run(fluid, name):
    rng = np.random.RandomState(CONFIGS.index(name))
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        feed, outs, wrt = _build(fluid, name, rng)
        floats = [
            o
            for o in outs
            if o.dtype == fluid.core.VarDesc.VarType.FP32 or str(o.dtype) == "float32"
        ]
        terms = []
        for k, o in enumerate(floats):
            coef = fluid.layers.fill_constant([1], "float32", 0.5 + 0.25 * k)
            terms.append(fluid.layers.reduce_sum(fluid.layers.elementwise_mul(o, coef)))
        loss = fluid.layers.sums(terms)
        params = main.global_block().all_parameters()
        if name not in FORWARD_ONLY:
            fluid.backward.append_backward(loss)
    place = fluid.CPUPlace()
    exe = fluid.Executor(place)
    scope = fluid.Scope()
    with fluid.scope_guard(scope):
        exe.run(startup)
        for p in params:
            value = rng.uniform(-0.6, 0.6, p.shape).astype("float32")
            scope.find_var(p.name).get_tensor().set(value, place)
        fetch = list(outs)
        if name not in FORWARD_ONLY:
            fetch += [v.name + "@GRAD" for v in wrt] + [p.name + "@GRAD" for p in params]
        values = exe.run(main, feed=feed, fetch_list=fetch)
    return [np.array(v) for v in values]


if __name__ == "__main__":
    import paddle.fluid as fluid

    out = {}
    for name in CONFIGS:
        for i, v in enumerate(run(fluid, name)):
            out[f"{name}_{i}"] = v
        print(name, [out[f"{name}_{i}"].shape for i in range(i + 1)])
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fluid18_rnn_cells.npz")
    np.savez(path, **out)
