"""Beam search decoding on LoD (Fluid's machine-translation recipe): 32 sources, beam 4,
30 steps, vocabulary 1000, against a hand-written numpy floor on padded [source, beam]
arrays.

The "model" is a fixed next-word log-probability table indexed by the previous word, so
both contenders do only the search: oar runs, per step, gather + topk + elementwise_add +
lod_reset + beam_search (the LoD op), then beam_search_decode over the 31 steps; numpy keeps
[32, 4] ids/scores/parents and back-traces the best beam. The check compares the best
sentence's score of every source.
"""

from __future__ import annotations

import numpy as np
from benchlib import Benchmark, Unavailable

N_SRC, BEAM, STEPS, VOCAB, END = 32, 4, 30, 1000, 1
_rng = np.random.default_rng(3)
_logits = _rng.standard_normal((VOCAB, VOCAB)).astype(np.float32) * 2
_logits[:, END] -= 6.0  # sentences rarely end: the decode runs all 30 steps
LOGP = (_logits - np.log(np.exp(_logits).sum(axis=1, keepdims=True))).astype(np.float32)


def oar_beam():
    try:
        from oar import fluid
    except ImportError as exc:
        raise Unavailable(str(exc)) from None
    L = fluid.layers
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        ids0 = fluid.data("ids0", [None, 1], "int64", lod_level=2)
        sc0 = fluid.data("sc0", [None, 1], "float32", lod_level=2)
        table = fluid.data("logp", [VOCAB, VOCAB], "float32")
        pre_ids, pre_scores = ids0, sc0
        all_ids, all_scores = [ids0], [sc0]
        for _ in range(STEPS):
            logp = L.gather(table, L.reshape(pre_ids, [-1]))
            top_s, top_i = L.topk(logp, k=BEAM)
            acc = L.lod_reset(L.elementwise_add(top_s, pre_scores, axis=0), pre_ids)
            pre_ids, pre_scores = L.beam_search(pre_ids, pre_scores, top_i, acc, BEAM, END)
            all_ids.append(pre_ids)
            all_scores.append(pre_scores)
        sent, scores = L.beam_search_decode(all_ids, all_scores, BEAM, END)
    exe = fluid.Executor(fluid.CPUPlace())
    place = fluid.CPUPlace()
    lens = [[1] * N_SRC, [1] * N_SRC]
    feed = {
        "ids0": fluid.create_lod_tensor(np.zeros((N_SRC, 1), "int64"), lens, place),
        "sc0": fluid.create_lod_tensor(np.zeros((N_SRC, 1), "float32"), lens, place),
        "logp": LOGP,
    }

    def step():
        s = exe.run(main, feed=feed, fetch_list=[scores], return_numpy=False)[0]
        top, bottom = s.lod()
        flat = np.array(s)
        # best sentence of each source = its first; its score = the sentence's last entry
        return np.array([flat[bottom[top[i] + 1] - 1] for i in range(N_SRC)])

    return step


def numpy_beam():
    def step():
        ids = np.zeros((N_SRC, 1), np.int64)
        scores = np.zeros((N_SRC, 1), np.float32)
        done = np.zeros((N_SRC, 1), bool)
        for _ in range(STEPS):
            cand = scores[:, :, None] + LOGP[ids]  # [src, beams, vocab]
            ended = np.full(VOCAB, -np.inf, np.float32)
            ended[END] = 0.0
            cand = np.where(done[:, :, None], scores[:, :, None] + ended, cand)
            flat = cand.reshape(N_SRC, -1)
            top = np.argpartition(-flat, BEAM - 1, axis=1)[:, :BEAM]
            order = np.argsort(-np.take_along_axis(flat, top, 1), axis=1)
            top = np.take_along_axis(top, order, 1)
            parent, ids = top // VOCAB, top % VOCAB
            scores = np.take_along_axis(flat, top, 1)
            done = np.take_along_axis(done, parent, 1) | (ids == END)
        return scores[:, 0]

    return step


BENCHMARKS = [
    Benchmark(
        "beam_search",
        "LoD beam search decode: 32 sources, beam 4, 30 steps, vocab 1000 (numpy: padded arrays)",
        {"oar": oar_beam, "numpy": numpy_beam},
        rtol=1e-4,
        atol=1e-3,
    ),
]
