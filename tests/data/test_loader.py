"""PyReader / DataLoader: the seed's three decorate_* forms, iterable and not, places, errors, cleanup."""

import gc
import threading

import numpy as np
import oar
import pytest
from oar import fluid

pytest.importorskip("oar_data")

N_SAMPLES = 100
BATCH = 32


def fake_sample_reader():
    for i in range(N_SAMPLES):
        yield np.full((784,), i, "float32"), np.array([i % 10], "int64")


def fake_batch_reader():
    for i in range(10):
        yield np.full((BATCH, 784), i, "float32"), np.full((BATCH, 1), i, "int64")


def build(iterable, capacity=10):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        image = fluid.layers.data(name="image", dtype="float32", shape=[784])
        label = fluid.layers.data(name="label", dtype="int64", shape=[1])
        reader = fluid.io.PyReader(feed_list=[image, label], capacity=capacity, iterable=iterable)
        total = fluid.layers.mean(image)
    return main, startup, reader, image, label, total


def decorate(reader, kind, places, drop_last=True):
    if kind == "sample":
        reader.decorate_sample_generator(
            fake_sample_reader, batch_size=BATCH, drop_last=drop_last, places=places
        )
    elif kind == "sample_list":
        reader.decorate_sample_list_generator(
            oar.reader.shuffle(oar.batch(fake_sample_reader, batch_size=BATCH), buf_size=64),
            places=places,
        )
    else:
        reader.decorate_batch_generator(fake_batch_reader, places=places)


# batches per epoch: 100 samples by 32 -> 3 full (+1 of 4 unless dropped); 10 batch-level batches
EXPECTED = {"sample": [32, 32, 32], "sample_list": [32, 32, 32, 4], "batch": [32] * 10}


def run_non_iterable(exe, program, reader, fetch, values=False):
    got = []
    reader.start()
    try:
        while True:
            out = exe.run(program, fetch_list=[fetch])
            got.append(out[0].item() if values else out[0].shape[0])
    except fluid.core.EOFException:
        reader.reset()
    return got


@pytest.mark.parametrize("kind", ["sample", "sample_list", "batch"])
def test_iterable_one_place(kind, no_leaks):
    main, startup, reader, image, label, total = build(True)
    decorate(reader, kind, fluid.cpu_places(1))
    exe = fluid.Executor(fluid.CPUPlace())
    for _ in range(2):  # two epochs, same counts
        sizes = []
        for data in reader():
            assert isinstance(data, list) and len(data) == 1 and set(data[0]) == {"image", "label"}
            assert data[0]["image"].dtype == np.float32 and data[0]["label"].dtype == np.int64
            out = exe.run(main, feed=data, fetch_list=[image])
            sizes.append(out[0].shape[0])
        assert sorted(sizes) == sorted(EXPECTED[kind])  # sample_list shuffles whole batches


@pytest.mark.parametrize("kind", ["sample", "sample_list", "batch"])
def test_non_iterable(kind, no_leaks):
    main, startup, reader, image, label, total = build(False)
    decorate(reader, kind, None)
    exe = fluid.Executor(fluid.CPUPlace())
    for _ in range(2):
        assert sorted(run_non_iterable(exe, main, reader, image)) == sorted(EXPECTED[kind])


def test_non_iterable_batches_arrive_in_order():
    main, startup, reader, image, label, total = build(False)
    reader.decorate_batch_generator(fake_batch_reader)
    exe = fluid.Executor(fluid.CPUPlace())
    reader.start()
    firsts = []
    try:
        while True:
            firsts.append(float(exe.run(main, fetch_list=[image])[0][0, 0]))
    except fluid.core.EOFException:
        reader.reset()
    assert firsts == [float(i) for i in range(10)]


def test_sample_generator_keeps_last_batch_without_drop_last():
    main, startup, reader, image, label, total = build(True)
    decorate(reader, "sample", fluid.CPUPlace(), drop_last=False)
    assert [d[0]["image"].shape[0] for d in reader()] == [32, 32, 32, 4]


@pytest.mark.parametrize("nplaces,expected_steps", [(2, 5), (3, 3)])
def test_iterable_several_places(nplaces, expected_steps, no_leaks):
    main, startup, reader, image, label, total = build(True)
    decorate(reader, "batch", fluid.cpu_places(nplaces))
    prog = fluid.CompiledProgram(main).with_data_parallel(places=fluid.cpu_places(nplaces))
    exe = fluid.Executor(fluid.CPUPlace())
    steps = []
    for data in reader():
        assert len(data) == nplaces
        steps.append([int(d["image"][0, 0]) for d in data])
        out = exe.run(prog, feed=data, fetch_list=[image])
        assert out[0].shape[0] == BATCH * nplaces
    # batches are dealt to places in order; an incomplete last group is dropped
    assert len(steps) == expected_steps
    assert sum(steps, []) == list(range(expected_steps * nplaces))


def test_return_list():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        image = fluid.layers.data(name="image", dtype="float32", shape=[784])
        label = fluid.layers.data(name="label", dtype="int64", shape=[1])
    loader = fluid.io.DataLoader.from_generator(
        feed_list=[image, label], capacity=4, return_list=True
    )
    loader.set_batch_generator(fake_batch_reader, places=fluid.CPUPlace())
    img, lab = next(iter(loader()))
    assert img.shape == (32, 784) and lab.shape == (32, 1)
    loader.set_batch_generator(fake_batch_reader, places=fluid.cpu_places(2))
    first = next(iter(loader()))
    assert len(first) == 2 and len(first[0]) == 2


def test_training_through_reader_matches_feeding_by_hand():
    def train(use_reader):
        main, startup = fluid.Program(), fluid.Program()
        main.random_seed = startup.random_seed = 7
        with fluid.program_guard(main, startup), fluid.unique_name.guard():
            x = fluid.layers.data(name="x", dtype="float32", shape=[4])
            y = fluid.layers.data(name="y", dtype="int64", shape=[1])
            loss = fluid.layers.mean(
                fluid.layers.cross_entropy(fluid.layers.fc(x, 3, act="softmax"), y)
            )
            fluid.optimizer.Adam(0.05).minimize(loss)
            if use_reader:
                reader = fluid.io.PyReader(feed_list=[x, y], capacity=2, iterable=False)
        rng = np.random.default_rng(0)
        batches = [
            (rng.normal(size=(8, 4)).astype("float32"), rng.integers(0, 3, (8, 1)).astype("int64"))
            for _ in range(6)
        ]
        scope = fluid.Scope()
        exe = fluid.Executor(fluid.CPUPlace())
        losses = []
        with fluid.scope_guard(scope):
            exe.run(startup)
            if use_reader:
                reader.decorate_batch_generator(lambda: iter(batches))
                reader.start()
                try:
                    while True:
                        losses.append(exe.run(main, fetch_list=[loss])[0].item())
                except fluid.core.EOFException:
                    reader.reset()
            else:
                for bx, by in batches:
                    losses.append(
                        exe.run(main, feed={"x": bx, "y": by}, fetch_list=[loss])[0].item()
                    )
        return losses

    by_hand = train(False)
    assert len(by_hand) == 6 and len(set(by_hand)) == 6
    assert np.allclose(train(True), by_hand)


def network():
    image = fluid.layers.data(name="image", dtype="float32", shape=[784])
    label = fluid.layers.data(name="label", dtype="int64", shape=[1])
    reader = fluid.io.PyReader(feed_list=[image, label], capacity=64, iterable=False)
    pred = fluid.layers.fc(image, 10, act="softmax")
    loss = fluid.layers.mean(fluid.layers.cross_entropy(pred, label))
    return loss, reader


def test_train_test_pair_shares_parameters(no_leaks):
    train_prog, train_startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(train_prog, train_startup):
        with fluid.unique_name.guard():
            train_loss, train_reader = network()
            fluid.optimizer.Adam(learning_rate=0.01).minimize(train_loss)
    test_prog, test_startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(test_prog, test_startup):
        with fluid.unique_name.guard():
            test_loss, test_reader = network()
    train_params = sorted(p.name for p in train_prog.all_parameters())
    assert train_params == sorted(p.name for p in test_prog.all_parameters())

    def samples():
        rng = np.random.default_rng(1)
        for _ in range(64):
            yield rng.uniform(-1, 1, 784).astype("float32"), np.array([rng.integers(10)], "int64")

    scope = fluid.Scope()
    exe = fluid.Executor(fluid.CPUPlace())
    with fluid.scope_guard(scope):
        exe.run(train_startup)
        exe.run(test_startup)
        train_reader.decorate_sample_list_generator(oar.batch(samples, 16))
        test_reader.decorate_sample_list_generator(oar.batch(samples, 16))
        w_name = train_params[0]
        before = np.array(scope.find_var(w_name).get_tensor()).copy()
        test_losses = []
        for _ in range(2):
            assert len(run_non_iterable(exe, train_prog, train_reader, train_loss)) == 4
            test_losses.append(
                run_non_iterable(exe, test_prog, test_reader, test_loss, values=True)
            )
        after = np.array(scope.find_var(w_name).get_tensor())
    assert not np.allclose(before, after)  # training updated the shared weight
    # the test program sees the trained weights: its loss changes between epochs
    assert len(test_losses[0]) == 4 and test_losses[0] != test_losses[1]


def broken_reader():
    for _i in range(5):
        yield np.zeros(784, "float32"), np.array([1], "int64")
    raise IndexError("sample 5 is broken")


@pytest.mark.parametrize("iterable", [True, False])
def test_reader_error_reaches_training_loop(iterable, no_leaks):
    main, startup, reader, image, label, total = build(iterable)
    reader.decorate_sample_generator(
        broken_reader, batch_size=2, places=fluid.CPUPlace() if iterable else None
    )
    exe = fluid.Executor(fluid.CPUPlace())
    steps = 0
    with pytest.raises(IndexError, match="sample 5 is broken") as info:
        if iterable:
            for data in reader():
                exe.run(main, feed=data, fetch_list=[image])
                steps += 1
        else:
            reader.start()
            while True:
                exe.run(main, fetch_list=[image])
                steps += 1
    assert steps == 2
    assert any(tb.name == "broken_reader" for tb in info.traceback)
    if not iterable:
        reader.reset()


@pytest.mark.parametrize("iterable", [True, False])
def test_wrong_shape_and_dtype_are_named(iterable, no_leaks):
    def wrong_shape():
        yield np.zeros(784, "float32"), np.array([1], "int64")
        yield np.zeros(783, "float32"), np.array([1], "int64")

    def wrong_dtype():
        yield np.zeros(784, "float32"), np.array([1.5], "float32")

    exe = fluid.Executor(fluid.CPUPlace())
    for gen, err, pattern in [
        (wrong_shape, ValueError, r"field 'image' of sample 1 has shape \[783\]"),
        (wrong_dtype, TypeError, r"field 'label' of sample 0 has dtype float32.*int64"),
    ]:
        main, startup, reader, image, label, total = build(iterable)
        reader.decorate_sample_generator(
            gen, batch_size=2, drop_last=False, places=fluid.CPUPlace() if iterable else None
        )
        with pytest.raises(err, match=pattern):
            if iterable:
                for data in reader():
                    exe.run(main, feed=data)
            else:
                reader.start()
                exe.run(main, fetch_list=[image])
        if not iterable:
            reader.reset()


def test_batch_generator_wrong_shape():
    main, startup, reader, image, label, total = build(True)
    reader.decorate_batch_generator(
        lambda: iter([[np.zeros((4, 5), "float32"), np.zeros((4, 1), "int64")]]),
        places=fluid.CPUPlace(),
    )
    with pytest.raises(ValueError, match=r"field 'image' has shape \[4, 5\].*expects \[-1, 784\]"):
        list(reader())


def test_early_stop_reset_and_gc_leave_no_thread(no_leaks):
    def endless():
        while True:
            yield np.zeros(784, "float32"), np.array([0], "int64")

    main, startup, reader, image, label, total = build(True, capacity=2)
    reader.decorate_sample_generator(endless, batch_size=4, places=fluid.CPUPlace())
    for i, _ in enumerate(reader()):
        if i == 3:
            break
    main2, startup2, reader2, image2, label2, total2 = build(False, capacity=2)
    reader2.decorate_sample_generator(endless, batch_size=4)
    exe = fluid.Executor(fluid.CPUPlace())
    reader2.start()
    exe.run(main2, fetch_list=[image2])
    reader2.reset()
    reader2.start()
    exe.run(main2, fetch_list=[image2])
    assert any(t.name == "oar-dataloader" for t in threading.enumerate())
    # dropping the program (which holds its non-iterable readers) stops the thread
    del main2, startup2, reader2, image2, label2, total2, exe
    gc.collect()


def test_misuse_errors():
    main, startup, reader, image, label, total = build(False)
    exe = fluid.Executor(fluid.CPUPlace())
    with pytest.raises(RuntimeError, match="no data source"):
        reader.start()
    reader.decorate_sample_generator(fake_sample_reader, batch_size=BATCH)
    with pytest.raises(RuntimeError, match="not started"):
        exe.run(main, fetch_list=[image])
    reader.start()
    with pytest.raises(RuntimeError, match="twice"):
        reader.start()
    reader.reset()
    it_main, _, it_reader, *_ = build(True)
    with pytest.raises(ValueError, match="places must be given"):
        it_reader.decorate_sample_generator(fake_sample_reader, batch_size=BATCH)
    with pytest.raises(RuntimeError, match="non-iterable"):
        it_reader.start()
    with pytest.raises(ValueError, match="capacity"):
        fluid.io.PyReader(feed_list=[image], capacity=0)
    with pytest.raises(TypeError, match="not its result"):
        it_reader.decorate_batch_generator(fake_batch_reader(), places=fluid.CPUPlace())


def test_dataloader_from_generator_and_multiprocess(no_leaks):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        image = fluid.layers.data(name="image", dtype="float32", shape=[784])
        label = fluid.layers.data(name="label", dtype="int64", shape=[1])
    for mp in (False, True):
        loader = fluid.io.DataLoader.from_generator(
            feed_list=[image, label], capacity=4, use_multiprocess=mp
        )
        loader.set_sample_list_generator(
            oar.batch(fake_sample_reader, BATCH), places=fluid.CPUPlace()
        )
        got = [int(d[0]["image"][0, 0]) for d in loader()]
        assert got == [0, 32, 64, 96]
    loader = fluid.io.DataLoader.from_generator(
        feed_list=[image, label], capacity=4, use_multiprocess=True
    )
    loader.set_sample_generator(broken_reader, batch_size=2, places=fluid.CPUPlace())
    with pytest.raises(RuntimeError, match="IndexError.*sample 5 is broken"):
        list(loader())
    with pytest.raises(
        TypeError, match="DatasetFactory"
    ):  # from_dataset: tests/data/test_industrial.py
        fluid.io.DataLoader.from_dataset(None, fluid.cpu_places(1))


def test_dygraph_loader_yields_eager_variables(no_leaks):
    def gen():
        for i in range(10):
            yield np.full((4,), i, "float32"), np.array([i], "int64")

    with fluid.dygraph.guard():
        loader = fluid.io.DataLoader.from_generator(capacity=4, return_list=True)
        loader.set_sample_generator(gen, batch_size=3, places=fluid.CPUPlace())
        batches = list(loader())
        assert len(batches) == 3  # drop_last=True by default
        img, label = batches[1]
        assert (
            isinstance(img, fluid.dygraph.VarBase) and img.shape == [3, 4] and label.shape == [3, 1]
        )
        np.testing.assert_array_equal(label.numpy().ravel(), [3, 4, 5])
        assert img.stop_gradient
        loader.set_batch_generator(
            lambda: iter([[np.ones((2, 3), "float32")]]), places=fluid.CPUPlace()
        )
        (only,) = next(iter(loader()))
        assert only.numpy().sum() == 6
        with pytest.raises(ValueError, match="return_list=True"):
            fluid.io.DataLoader.from_generator(capacity=4)


def test_multiprocess_loader_stops_a_slow_child_early(no_leaks):
    import time

    def slow():
        for i in range(100):
            time.sleep(0.2)
            yield np.zeros(784, "float32"), np.array([i % 10], "int64")

    main, startup, reader, image, label, total = build(True, capacity=2)
    loader = fluid.io.DataLoader.from_generator(
        feed_list=[image, label], capacity=2, use_multiprocess=True
    )
    loader.set_sample_generator(slow, batch_size=1, places=fluid.CPUPlace())
    for _ in loader():
        break  # the child is still sleeping in its generator: it must be terminated, not waited for


@pytest.mark.parametrize("iterable", [True, False])
def test_lod_input_through_the_loader(iterable, no_leaks):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        words = fluid.layers.data(name="words", shape=[1], dtype="int64", lod_level=1)
        label = fluid.layers.data(name="label", shape=[1], dtype="int64")
        reader = fluid.io.PyReader(feed_list=[words, label], capacity=2, iterable=iterable)
        doubled = fluid.layers.scale(words, scale=2.0)

    def sentences():
        yield [1, 2, 3], [0]
        yield [4], [1]
        yield [5, 6], [0]

    reader.decorate_sample_generator(
        sentences, batch_size=3, places=fluid.CPUPlace() if iterable else None
    )
    exe = fluid.Executor(fluid.CPUPlace())
    if iterable:
        (data,) = list(reader())
        assert data[0]["words"].recursive_sequence_lengths() == [[3, 1, 2]]
        out = exe.run(main, feed=data, fetch_list=[words, doubled], return_numpy=False)
    else:
        reader.start()
        out = exe.run(main, fetch_list=[words, doubled], return_numpy=False)
        with pytest.raises(fluid.core.EOFException):
            exe.run(main, fetch_list=[words])
        reader.reset()
    assert out[0].recursive_sequence_lengths() == [[3, 1, 2]]
    np.testing.assert_array_equal(np.array(out[0]).ravel(), [1, 2, 3, 4, 5, 6])
    np.testing.assert_array_equal(np.array(out[1]).ravel(), [2, 4, 6, 8, 10, 12])


def test_non_iterable_batches_go_to_the_executors_device(monkeypatch):
    """On a non-CPU device the executor moves reader batches to it, as it does user feeds."""
    main, startup, reader, image, label, total = build(False)
    reader.decorate_batch_generator(fake_batch_reader)
    exe = fluid.Executor(fluid.CPUPlace())
    moved, seen = [], {}

    class FakeDevice:
        name = "fake"

        def from_host(self, arr, device_id):
            moved.append(arr.shape)
            return arr

    class StubPlan:
        def run(self, arrays, lods, scope, return_numpy):
            seen.update(arrays)
            return []

    monkeypatch.setattr(exe, "_device", FakeDevice())
    monkeypatch.setattr(exe, "_plan", lambda *a: StubPlan())
    reader.start()
    exe.run(main, fetch_list=[])
    reader.reset()
    assert sorted(moved) == [(BATCH, 1), (BATCH, 784)] and set(seen) == {"image", "label"}


def test_several_places_keep_the_short_last_group_without_drop_last():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        image = fluid.layers.data(name="image", dtype="float32", shape=[784])
        label = fluid.layers.data(name="label", dtype="int64", shape=[1])
    loader = fluid.io.DataLoader.from_generator(
        feed_list=[image, label], capacity=4, drop_last=False
    )
    loader.set_batch_generator(fake_batch_reader, places=fluid.cpu_places(3))
    assert [len(step) for step in loader()] == [3, 3, 3, 1]


@pytest.mark.parametrize("nplaces,expected_steps", [(2, 5), (3, 3)])
def test_non_iterable_data_parallel_reads_one_batch_per_device(nplaces, expected_steps, no_leaks):
    main, startup, reader, image, label, total = build(False)
    reader.decorate_batch_generator(fake_batch_reader)
    prog = fluid.CompiledProgram(main).with_data_parallel(places=fluid.cpu_places(nplaces))
    exe = fluid.Executor(fluid.CPUPlace())
    firsts = []
    reader.start()
    try:
        while True:
            out = exe.run(prog, fetch_list=[image])[0]
            assert out.shape[0] == BATCH * nplaces
            firsts.append(out[::BATCH, 0].astype(int).tolist())
    except fluid.core.EOFException:
        reader.reset()
    # consecutive batches, one per device; the incomplete last group is dropped
    assert len(firsts) == expected_steps and sum(firsts, []) == list(
        range(expected_steps * nplaces)
    )
    # the plain program still reads one batch per run
    assert len(run_non_iterable(exe, main, reader, image)) == 10
