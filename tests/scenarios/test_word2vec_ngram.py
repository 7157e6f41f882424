"""Scenario: the Fluid book's word2vec N-gram model (four context words through one shared,
sparse embedding table, concat, a sigmoid hidden fc, a softmax fc, cross_entropy) learns a
synthetic language whose next word is the last context word through one of two permutations, chosen by the first."""

import numpy as np
from oar import fluid

V, EMB, HIDDEN, N = 12, 32, 128, 4


PERMS = np.random.default_rng(9).permutation(V), np.random.default_rng(10).permutation(V)


def corpus(rng, n):
    """The next word: the last word through one of two permutations, picked by the first."""
    words = rng.integers(0, V, (n, N)).astype("int64")
    nxt = np.where(words[:, 0] < V // 2, PERMS[0][words[:, 3]], PERMS[1][words[:, 3]])
    return words, nxt.astype("int64")


def build():
    main, startup = fluid.Program(), fluid.Program()
    main.random_seed = startup.random_seed = 5
    with fluid.program_guard(main, startup):
        ctx = [fluid.data(f"w{k}", [None, 1], "int64") for k in range(N)]
        nxt = fluid.data("next", [None, 1], "int64")
        embs = [
            fluid.layers.embedding(w, size=[V, EMB], is_sparse=True, param_attr="shared_w")
            for w in ctx
        ]
        hidden = fluid.layers.fc(fluid.layers.concat(embs, axis=1), HIDDEN, act="sigmoid")
        predict = fluid.layers.fc(hidden, V, act="softmax")
        loss = fluid.layers.mean(fluid.layers.cross_entropy(predict, nxt))
        acc = fluid.layers.accuracy(predict, nxt)
        test = main.clone(for_test=True)
        fluid.optimizer.Adagrad(0.3).minimize(loss)
    return main, test, startup, loss, acc


def test_word2vec_ngram_learns_the_rule():
    main, test, startup, loss, acc = build()
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    rng = np.random.default_rng(0)

    def feed(words, nxt):
        f = {f"w{k}": words[:, k : k + 1] for k in range(N)}
        f["next"] = nxt.reshape(-1, 1)
        return f

    first = None
    for _ in range(300):
        (lv,) = exe.run(main, feed=feed(*corpus(rng, 64)), fetch_list=[loss], scope=scope)
        first = float(lv) if first is None else first
    words, nxt = corpus(np.random.default_rng(1), 512)
    lv, av = exe.run(test, feed=feed(words, nxt), fetch_list=[loss, acc], scope=scope)
    assert float(lv) < 0.25 * first, (first, float(lv))
    assert float(av) > 0.9, float(av)
