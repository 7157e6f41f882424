"""IfElse over sequences: a condition with one value per sequence sends whole sequences
through a branch, and the merged output keeps the input's LoD (as in Fluid 1.8.5)."""

import numpy as np
from oar import fluid

layers = fluid.layers
LENS = [2, 1, 3, 2]


def test_ifelse_splits_and_merges_whole_sequences():
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        x = fluid.data("x", [None, 2], "float32", lod_level=1)
        x.stop_gradient = False
        first = layers.sequence_pool(x, "first")
        cond = layers.less_than(
            layers.slice(first, axes=[1], starts=[0], ends=[1]),
            layers.fill_constant([1], "float32", 5.0),
        )
        ie = layers.IfElse(cond)
        with ie.true_block():
            ie.output(layers.sequence_pool(ie.input(x), "sum"), layers.scale(ie.input(x), 10.0))
        with ie.false_block():
            ie.output(layers.sequence_pool(ie.input(x), "max"), layers.scale(ie.input(x), -1.0))
        pooled, out = ie()
        loss = layers.reduce_sum(layers.square(out)) + layers.reduce_sum(pooled)
        (gx,) = fluid.gradients(loss, [x])
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(start)
    xv = np.arange(16, dtype="float32").reshape(8, 2)
    feed = fluid.create_lod_tensor(xv, [LENS], fluid.CPUPlace())
    got = exe.run(main, {"x": feed}, fetch_list=[pooled, out, gx], return_numpy=False)
    starts = np.cumsum([0] + LENS)
    seqs = [xv[a:b] for a, b in zip(starts, starts[1:])]
    taken = [s[0, 0] < 5.0 for s in seqs]  # sequences 0 and 1
    want_pooled = [s.sum(0) if t else s.max(0) for s, t in zip(seqs, taken)]
    np.testing.assert_allclose(np.array(got[0]), want_pooled)
    want_out = np.concatenate([s * (10.0 if t else -1.0) for s, t in zip(seqs, taken)])
    np.testing.assert_allclose(np.array(got[1]), want_out)
    assert got[1].recursive_sequence_lengths() == [LENS]
    grads = []
    for s, t in zip(seqs, taken):
        g = 2 * s * (100.0 if t else 1.0)
        if t:
            g = g + 1.0
        else:
            g = g + (s == s.max(0))
        grads.append(g)
    np.testing.assert_allclose(np.array(got[2]), np.concatenate(grads), rtol=1e-6)
