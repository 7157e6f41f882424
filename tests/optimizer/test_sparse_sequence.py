"""Sparse (SelectedRows) embedding gradients from a sequence model (LoD ids -> embedding ->
dynamic_lstm -> sequence_pool) train exactly like the dense ones under SGD, Momentum,
Adagrad and Adam; Adam's lazy_mode touches only the rows of the batch."""

import numpy as np
import pytest
from oar import fluid

OPT = fluid.optimizer
V, E, H = 10, 4, 3
TABLE = np.random.default_rng(5).normal(size=(V, E)).astype("float32")
BATCHES = [  # (ids, sequence lengths, labels): ids repeat within and across sequences
    (np.array([3, 7, 3, 0, 7, 7, 1, 3], "int64"), [3, 1, 4], np.array([0, 1, 0], "int64")),
    (np.array([2, 5, 2, 9], "int64"), [1, 3], np.array([1, 0], "int64")),
]

MAKERS = {
    "SGD": lambda: OPT.SGD(0.5),
    "Momentum": lambda: OPT.Momentum(0.5, 0.9),
    "Adagrad": lambda: OPT.Adagrad(0.5),
    "Adam": lambda: OPT.Adam(0.1),
    "Adam-lazy": lambda: OPT.Adam(0.1, lazy_mode=True),
}


def train(make, is_sparse, batches):
    main, startup = fluid.Program(), fluid.Program()
    main.random_seed = startup.random_seed = 3
    with fluid.program_guard(main, startup):
        ids = fluid.data("ids", [None, 1], "int64", lod_level=1)
        label = fluid.data("label", [None, 1], "int64")
        emb = fluid.layers.embedding(
            ids,
            size=[V, E],
            is_sparse=is_sparse,
            param_attr=fluid.ParamAttr(
                name="emb", initializer=fluid.initializer.NumpyArrayInitializer(TABLE)
            ),
        )
        proj = fluid.layers.fc(emb, 4 * H)
        hidden, _ = fluid.layers.dynamic_lstm(proj, 4 * H)
        pooled = fluid.layers.sequence_pool(hidden, "max")
        logits = fluid.layers.fc(pooled, 2)
        loss = fluid.layers.mean(fluid.layers.softmax_with_cross_entropy(logits, label))
        make().minimize(loss)
    grad_type = main.global_block().var("emb@GRAD").type
    assert (grad_type == "selected_rows") == is_sparse
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    tables = []
    place = fluid.CPUPlace()
    for idv, lens, lab in batches:
        feed = {
            "ids": fluid.create_lod_tensor(idv.reshape(-1, 1), [lens], place),
            "label": lab.reshape(-1, 1),
        }
        exe.run(main, feed=feed, scope=scope)
        tables.append(np.array(scope.find_var("emb").value).copy())
    return tables


@pytest.mark.parametrize("name", ["SGD", "Momentum", "Adagrad", "Adam"])
def test_sparse_equals_dense(name):
    dense = train(MAKERS[name], False, BATCHES)
    sparse = train(MAKERS[name], True, BATCHES)
    assert np.abs(dense[-1] - TABLE).max() > 1e-4
    for d, s in zip(dense, sparse):
        np.testing.assert_allclose(s, d, rtol=1e-5, atol=1e-6)


def test_lazy_adam_updates_only_the_rows_of_the_batch():
    lazy = train(MAKERS["Adam-lazy"], True, BATCHES)
    dense = train(MAKERS["Adam"], False, BATCHES)
    first, second = set(BATCHES[0][0].tolist()), set(BATCHES[1][0].tolist())
    only_first = sorted(first - second)
    unseen = sorted(set(range(V)) - first - second)
    # the first step is the same (a zero moment moves nothing)...
    np.testing.assert_allclose(lazy[0], dense[0], rtol=1e-5, atol=1e-6)
    # ...then rows absent from the second batch stay put under lazy_mode, and move (their
    # moments are not zero) under dense Adam
    np.testing.assert_array_equal(lazy[1][only_first], lazy[0][only_first])
    assert np.abs(dense[1][only_first] - dense[0][only_first]).min() > 1e-6
    np.testing.assert_array_equal(lazy[1][unseen], TABLE[unseen])
    moved = sorted(second)
    assert np.abs(lazy[1][moved] - lazy[0][moved]).min() > 1e-6
