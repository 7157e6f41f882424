"""DataFeeder: dense and LoD fields, checks that name the field and sample, multi-device feeding."""

import numpy as np
import pytest
from oar import fluid

pytest.importorskip("oar_data")


def layers():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        img = fluid.layers.data(name="img", shape=[2, 3], dtype="float32")
        words = fluid.layers.data(name="words", shape=[1], dtype="int64", lod_level=1)
        label = fluid.layers.data(name="label", shape=[1], dtype="int64")
    return main, img, words, label


def test_feed_dense_and_lod():
    main, img, words, label = layers()
    feeder = fluid.DataFeeder(feed_list=[img, words, label], place=fluid.CPUPlace())
    batch = [(np.arange(6), [1, 2, 3], 0), (np.ones((2, 3)), [4], 1), (np.zeros(6), [5, 6], 2)]
    out = feeder.feed(batch)
    assert out["img"].dtype == np.float32 and out["img"].shape == (3, 2, 3)
    np.testing.assert_array_equal(out["img"][0], np.arange(6).reshape(2, 3))
    w = out["words"]
    assert isinstance(w, fluid.LoDTensor)
    assert w.recursive_sequence_lengths() == [[3, 1, 2]] and w.lod() == [[0, 3, 4, 6]]
    np.testing.assert_array_equal(np.array(w), np.arange(1, 7).reshape(6, 1))
    assert np.array(w).dtype == np.int64
    assert out["label"].shape == (3, 1) and out["label"].dtype == np.int64
    assert feeder.feed_names == ["img", "words", "label"]


def test_feed_by_name_and_two_level_lod():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        fluid.layers.data(name="para", shape=[1], dtype="int64", lod_level=2)
    feeder = fluid.DataFeeder(feed_list=["para"], place=fluid.CPUPlace(), program=main)
    out = feeder.feed([([[1, 2], [3]],), ([[4, 5, 6]],)])["para"]
    assert out.recursive_sequence_lengths() == [[2, 1], [2, 1, 3]]
    np.testing.assert_array_equal(np.array(out).ravel(), [1, 2, 3, 4, 5, 6])


def test_feed_runs_in_executor():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.data(name="x", shape=[3], dtype="float32")
        y = fluid.layers.data(name="y", shape=[1], dtype="int64")
        s = fluid.layers.mean(x)
    feeder = fluid.DataFeeder([x, y], fluid.CPUPlace())
    out = fluid.Executor(fluid.CPUPlace()).run(
        main, feed=feeder.feed([([1, 2, 3], [0]), ([3, 4, 5], [1])]), fetch_list=[s]
    )
    assert out[0].item() == pytest.approx(3.0)


def test_shape_and_dtype_errors_name_field_and_sample():
    main, img, words, label = layers()
    feeder = fluid.DataFeeder(feed_list=[img, words, label], place=fluid.CPUPlace())
    with pytest.raises(
        ValueError,
        match=r"field 'img' of sample 1 has shape \[5\].*expects per-sample shape \[2, 3\]",
    ):
        feeder.feed([(np.zeros(6), [1], 0), (np.zeros(5), [1], 0)])
    with pytest.raises(TypeError, match=r"field 'label' of sample 2 has dtype float64.*int64"):
        feeder.feed([(np.zeros(6), [1], 0), (np.zeros(6), [1], 0), (np.zeros(6), [1], 0.5)])
    with pytest.raises(TypeError, match=r"field 'words' of sample 0 has dtype float64"):
        feeder.feed([(np.zeros(6), [1.5, 2.0], 0)])
    with pytest.raises(
        ValueError, match=r"sample 0 has 2 fields, but the feed list has 3 data layers"
    ):
        feeder.feed([(np.zeros(6), [1])])
    with pytest.raises(ValueError, match="field 'words' of sample 0 must be a sequence"):
        feeder.feed([(np.zeros(6), 3, 0)])


def test_feed_parallel_and_decorate_reader():
    main, img, words, label = layers()
    feeder = fluid.DataFeeder(feed_list=[img, words, label], place=fluid.CPUPlace())

    def sample(i):
        return (np.full(6, i), [i, i], i)

    batches = [[sample(2 * b), sample(2 * b + 1)] for b in range(5)]
    outs = list(feeder.feed_parallel(batches[:2], num_places=2))
    assert [o["label"].ravel().tolist() for o in outs] == [[0, 1], [2, 3]]
    with pytest.raises(ValueError, match="3 minibatches for 2 devices"):
        list(feeder.feed_parallel(batches[:3], num_places=2))

    single = feeder.decorate_reader(lambda: iter(batches), multi_devices=False)
    assert [d["label"].ravel().tolist() for d in single()] == [[2 * b, 2 * b + 1] for b in range(5)]
    multi = feeder.decorate_reader(lambda: iter(batches), multi_devices=True, num_places=2)
    groups = list(multi())
    assert len(groups) == 2 and all(len(g) == 2 for g in groups)  # the fifth batch is dropped
    assert groups[1][1]["label"].ravel().tolist() == [6, 7]
    keep = feeder.decorate_reader(
        lambda: iter(batches), multi_devices=True, num_places=2, drop_last=False
    )
    with pytest.raises(ValueError, match="left over"):
        list(keep())
