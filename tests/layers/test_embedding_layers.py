"""embedding / one_hot layers: numpy initial tables, padding, sparse gradients applied sparsely, bad input."""

import numpy as np
import pytest
from oar import fluid


def _programs():
    return fluid.Program(), fluid.Program()


def _run(main, startup, feed, fetch):
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    return exe, scope, exe.run(main, feed=feed, fetch_list=fetch, scope=scope)


def test_embedding_numpy_initial_and_padding():
    table = np.arange(12, dtype="float32").reshape(4, 3)
    main, startup = _programs()
    with fluid.program_guard(main, startup):
        ids = fluid.layers.data("ids", [1], dtype="int64")
        emb = fluid.layers.embedding(
            ids,
            size=[4, 3],
            padding_idx=-1,
            param_attr=fluid.ParamAttr(
                name="tbl", initializer=fluid.initializer.NumpyArrayInitializer(table)
            ),
        )
    op = main.global_block().ops[-1]
    assert (
        op.type == "lookup_table" and op.attr("padding_idx") == 3 and op.attr("is_sparse") is False
    )
    _, _, (out,) = _run(main, startup, {"ids": np.array([[0], [3], [2]], "int64")}, [emb])
    np.testing.assert_array_equal(out, np.stack([table[0], np.zeros(3), table[2]]))


@pytest.mark.parametrize("opt", ["sgd", "adam_lazy"])
def test_sparse_gradient_updates_only_looked_up_rows(opt):
    table = np.ones((6, 2), "float32")
    main, startup = _programs()
    with fluid.program_guard(main, startup):
        ids = fluid.layers.data("ids", [1], dtype="int64")
        emb = fluid.layers.embedding(
            ids,
            size=[6, 2],
            is_sparse=True,
            is_distributed=False,
            param_attr=fluid.ParamAttr(
                name="tbl", initializer=fluid.initializer.NumpyArrayInitializer(table)
            ),
        )
        loss = fluid.layers.reduce_sum(emb)
        optimizer = (
            fluid.optimizer.SGD(0.5) if opt == "sgd" else fluid.optimizer.Adam(0.5, lazy_mode=True)
        )
        optimizer.minimize(loss)
    assert main.global_block().var("tbl@GRAD").type == "selected_rows"
    assert main.global_block().ops[0].attr("is_sparse") is True
    exe, scope, _ = _run(main, startup, {"ids": np.array([[1], [4], [1]], "int64")}, [loss])
    w = np.array(scope.find_var("tbl").get_tensor())
    untouched = [0, 2, 3, 5]
    np.testing.assert_array_equal(w[untouched], table[untouched])
    if opt == "sgd":
        np.testing.assert_allclose(w[1], 1 - 0.5 * 2)  # id 1 looked up twice
        np.testing.assert_allclose(w[4], 1 - 0.5)
    else:
        assert (w[[1, 4]] < 1).all()


def test_sparse_and_dense_gradients_agree():
    results = []
    for sparse in (False, True):
        main, startup = _programs()
        with fluid.program_guard(main, startup):
            ids = fluid.layers.data("ids", [1], dtype="int64")
            emb = fluid.layers.embedding(
                ids,
                size=[5, 3],
                is_sparse=sparse,
                padding_idx=0,
                param_attr=fluid.ParamAttr(
                    name="t",
                    initializer=fluid.initializer.NumpyArrayInitializer(
                        np.linspace(-1, 1, 15).reshape(5, 3).astype("float32")
                    ),
                ),
            )
            loss = fluid.layers.reduce_mean(fluid.layers.square(emb))
            fluid.optimizer.SGD(0.1).minimize(loss)
        _, scope, _ = _run(main, startup, {"ids": np.array([[0], [2], [2], [4]], "int64")}, [loss])
        results.append(np.array(scope.find_var("t").get_tensor()))
    np.testing.assert_allclose(results[0], results[1], rtol=1e-6)


def test_fluid_embedding_v2_and_one_hot():
    main, startup = _programs()
    with fluid.program_guard(main, startup):
        ids = fluid.data("ids", [None, 2], dtype="int64")
        emb = fluid.embedding(ids, size=[7, 4])
        hot = fluid.one_hot(ids, depth=7)
        hot1 = fluid.layers.one_hot(fluid.layers.data("lab", [1], dtype="int64"), depth=3)
    assert emb.shape == (-1, 2, 4) and hot.shape == (-1, 2, 7) and hot1.shape == (-1, 3)
    assert [op.type for op in main.global_block().ops] == [
        "lookup_table_v2",
        "one_hot_v2",
        "one_hot",
    ]
    _, _, (e, h, h1) = _run(
        main,
        startup,
        {"ids": np.array([[1, 6]], "int64"), "lab": np.array([[2], [0]], "int64")},
        [emb, hot, hot1],
    )
    assert e.shape == (1, 2, 4)
    np.testing.assert_array_equal(h[0], np.eye(7, dtype="float32")[[1, 6]])
    np.testing.assert_array_equal(h1, np.eye(3, dtype="float32")[[2, 0]])


def test_bad_input():
    main, startup = _programs()
    with fluid.program_guard(main, startup):
        ids = fluid.layers.data("ids", [1], dtype="int64")
        fids = fluid.layers.data("fids", [1], dtype="float32")
        wide = fluid.layers.data("wide", [3], dtype="int64")
        with pytest.raises(ValueError, match="embedding: size"):
            fluid.layers.embedding(ids, size=[10])
        with pytest.raises(ValueError, match="embedding: size entries"):
            fluid.layers.embedding(ids, size=[10, 0])
        with pytest.raises(ValueError, match="padding_idx"):
            fluid.layers.embedding(ids, size=[10, 4], padding_idx=10)
        with pytest.raises(TypeError, match="int64 ids"):
            fluid.layers.embedding(fids, size=[10, 4])
        with pytest.raises(ValueError, match="last dim must be 1"):
            fluid.layers.embedding(wide, size=[10, 4])
        with pytest.raises(ValueError, match="depth"):
            fluid.layers.one_hot(ids, depth=0)
        with pytest.raises(TypeError, match="one_hot: argument 'input'"):
            fluid.layers.one_hot(np.zeros(3), depth=2)
        with pytest.raises(ValueError, match="NumpyArrayInitializer"):
            fluid.layers.embedding(
                ids,
                size=[3, 2],
                param_attr=fluid.ParamAttr(
                    initializer=fluid.initializer.NumpyArrayInitializer(np.zeros((2, 2)))
                ),
            )


@pytest.mark.parametrize("sparse", [False, True])
def test_embeddings_share_a_table_by_param_attr_name(sparse):
    """Seed 002: two embedding layers with ParamAttr(name=...) share one table; its gradient sums both uses."""
    main, startup = _programs()
    table = np.zeros((5, 2), "float32")
    with fluid.program_guard(main, startup):
        a = fluid.layers.data("a", [1], dtype="int64")
        b = fluid.layers.data("b", [1], dtype="int64")
        attr = fluid.ParamAttr(
            name="word_embedding", initializer=fluid.initializer.NumpyArrayInitializer(table)
        )
        ea = fluid.layers.embedding(a, size=[5, 2], is_sparse=sparse, param_attr=attr)
        eb = fluid.layers.embedding(b, size=[5, 2], is_sparse=sparse, param_attr=attr)
        loss = fluid.layers.reduce_sum(ea) + fluid.layers.reduce_sum(eb) * 2.0
        fluid.optimizer.SGD(1.0).minimize(loss)
    assert [p.name for p in main.all_parameters()] == ["word_embedding"]
    _, scope, _ = _run(
        main, startup, {"a": np.array([[1], [2]], "int64"), "b": np.array([[2]], "int64")}, [loss]
    )
    w = np.array(scope.find_var("word_embedding").get_tensor())
    np.testing.assert_allclose(w[:, 0], [0, -1, -3, 0, 0])
