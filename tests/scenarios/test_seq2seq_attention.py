"""Scenario: a seq2seq model with attention (Fluid 1.8's cell API) learns to reverse short
token sequences: trained with TrainingHelper + BasicDecoder (teacher forcing), then decoded
with BeamSearchDecoder in a separate inference program sharing the trained parameters."""

import numpy as np
from oar import fluid

L = fluid.layers
PAD, START, END = 0, 1, 2
V, S, EMB, HID, BEAM, BATCH = 9, 4, 16, 32, 3, 32


def batch(rng, n=BATCH):
    src = rng.integers(3, V, (n, S)).astype("int64")
    tgt = np.concatenate([src[:, ::-1], np.full((n, 1), END)], axis=1).astype("int64")
    dec_in = np.concatenate([np.full((n, 1), START), tgt[:, :-1]], axis=1).astype("int64")
    return src, dec_in, tgt


class AttentionCell(L.RNNCell):
    """A GRU step fed [input, attention context over the encoder outputs]."""

    def __init__(self, hidden):
        self.hidden = hidden
        self.gru = L.GRUCell(hidden, name="dec")

    def call(self, inputs, states, encoder_output):
        query = L.unsqueeze(states, [1])
        weights = L.softmax(L.matmul(query, encoder_output, transpose_y=True))
        context = L.squeeze(L.matmul(weights, encoder_output), [1])
        return self.gru(L.concat([inputs, context], 1), states)

    @property
    def state_shape(self):
        return [self.hidden]


def embed(ids):
    return fluid.embedding(ids, size=[V, EMB], param_attr=fluid.ParamAttr(name="tgt_emb"))


def project(x):
    return L.fc(
        x,
        V,
        num_flatten_dims=len(x.shape) - 1,
        param_attr=fluid.ParamAttr(name="out_w"),
        bias_attr=fluid.ParamAttr(name="out_b"),
    )


def encode(src):
    emb = fluid.embedding(src, size=[V, EMB], param_attr=fluid.ParamAttr(name="src_emb"))
    return L.rnn(L.GRUCell(HID, name="enc"), emb)


def build_train():
    main, startup = fluid.Program(), fluid.Program()
    main.random_seed = startup.random_seed = 11
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        src = fluid.data("src", [None, S], "int64")
        dec_in = fluid.data("dec_in", [None, S + 1], "int64")
        tgt = fluid.data("tgt", [None, S + 1], "int64")
        enc_out, enc_final = encode(src)
        lengths = L.fill_constant_batch_size_like(src, [-1], "int64", S + 1)
        helper = L.TrainingHelper(embed(dec_in), lengths)
        decoder = L.BasicDecoder(AttentionCell(HID), helper, output_fn=project)
        out, _ = L.dynamic_decode(decoder, inits=enc_final, encoder_output=enc_out)
        loss = L.mean(L.softmax_with_cross_entropy(out.cell_outputs, L.unsqueeze(tgt, [2])))
        fluid.optimizer.Adam(0.01).minimize(loss)
    return main, startup, loss


def build_infer():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        src = fluid.data("src", [None, S], "int64")
        enc_out, enc_final = encode(src)
        enc_out = L.BeamSearchDecoder.tile_beam_merge_with_batch(enc_out, BEAM)
        decoder = L.BeamSearchDecoder(
            AttentionCell(HID), START, END, BEAM, embedding_fn=embed, output_fn=project
        )
        ids, _ = L.dynamic_decode(decoder, inits=enc_final, max_step_num=S, encoder_output=enc_out)
    return main, ids


def test_seq2seq_with_attention_learns_to_reverse():
    rng = np.random.default_rng(0)
    main, startup, loss = build_train()
    infer, ids = build_infer()
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    losses = []
    for _ in range(150):
        src, dec_in, tgt = batch(rng)
        (lv,) = exe.run(main, feed={"src": src, "dec_in": dec_in, "tgt": tgt}, fetch_list=[loss], scope=scope)
        losses.append(float(lv))
    assert np.mean(losses[-10:]) < 0.25 * np.mean(losses[:10]), losses[::10]
    src, _, tgt = batch(np.random.default_rng(1), 64)
    (pred,) = exe.run(infer, feed={"src": src}, fetch_list=[ids], scope=scope)
    assert pred.shape == (64, S + 1, BEAM)
    best = pred[:, :, 0]
    exact = np.mean(np.all(best == tgt, axis=1))
    assert exact > 0.9, (exact, best[:4], tgt[:4])
