"""Scenario: a word2vec-style N-gram model (shared sparse embedding table, concat, fc,
softmax_with_cross_entropy) learns a deterministic next-word rule."""

import numpy as np
from oar import fluid

L = fluid.layers
V, EMB = 12, 16


def _build():
    main, startup = fluid.Program(), fluid.Program()
    main.random_seed = startup.random_seed = 7
    with fluid.program_guard(main, startup):
        w1 = L.data("w1", [1], dtype="int64")
        w2 = L.data("w2", [1], dtype="int64")
        nxt = L.data("next", [1], dtype="int64")
        embs = [
            L.embedding(w, size=[V, EMB], is_sparse=True, param_attr="shared_emb") for w in (w1, w2)
        ]
        hidden = L.fc(L.concat(embs, axis=1), 64, act="relu")
        logits = L.fc(hidden, V)
        loss = L.mean(L.softmax_with_cross_entropy(logits, nxt))
        acc = L.accuracy(L.softmax(logits), nxt)
        fluid.optimizer.Adam(0.01).minimize(loss)
    return main, startup, loss, acc


def test_ngram_model_learns_next_word():
    main, startup, loss, acc = _build()
    assert main.global_block().var("shared_emb@GRAD").type == "selected_rows"
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    rng = np.random.default_rng(0)
    for _ in range(250):
        a = rng.integers(0, V, (64, 1))
        b = rng.integers(0, V, (64, 1))
        feed = {"w1": a, "w2": b, "next": (a + 2 * b) % V}
        losses = exe.run(main, feed=feed, fetch_list=[loss, acc], scope=scope)
    a, b = np.meshgrid(np.arange(V), np.arange(V))
    a, b = a.reshape(-1, 1), b.reshape(-1, 1)
    final_loss, final_acc = exe.run(
        main.clone(for_test=True),
        feed={"w1": a, "w2": b, "next": (a + 2 * b) % V},
        fetch_list=[loss, acc],
        scope=scope,
    )
    assert final_acc[0] > 0.95, (final_loss, final_acc, losses)
