"""The industrial data path: MultiSlotDataGenerator files, DatasetFactory datasets,
Executor.train_from_dataset with threads, DataLoader.from_dataset; py_reader layers."""

from __future__ import annotations

import io
import sys

import numpy as np
import oar.fluid.incubate.data_generator as dg
import pytest
from oar import fluid

TRUE_W = np.array([1.5, -2.0, 0.5], "float32")


class Regression(dg.MultiSlotDataGenerator):
    def generate_sample(self, line):
        def it():
            values = [float(v) for v in line.split()]
            yield [("x", values[:3]), ("y", values[3:])]

        return it


def _write_files(tmp_path, n_files=4, rows=64):
    rng = np.random.RandomState(0)
    files = []
    for k in range(n_files):
        x = rng.uniform(-1, 1, (rows, 3)).astype("float32")
        y = x @ TRUE_W + 0.3
        raw = "\n".join(" ".join(repr(float(v)) for v in (*xi, yi)) for xi, yi in zip(x, y))
        out = io.StringIO()
        stdin, stdout = sys.stdin, sys.stdout
        sys.stdin, sys.stdout = io.StringIO(raw + "\n"), out
        try:
            Regression().run_from_stdin()
        finally:
            sys.stdin, sys.stdout = stdin, stdout
        path = tmp_path / f"part-{k}"
        path.write_text(out.getvalue())
        files.append(str(path))
    return files


def test_generator_writes_fluids_multislot_lines():
    """Fluid 1.8.5 writes '3 1.5 2.0 3.0 1 1' for x=[1.5, 2, 3] (floats), y=[1] (int)."""

    class G(dg.MultiSlotDataGenerator):
        def generate_sample(self, line):
            def it():
                xs = [float(v) for v in line.split()[:3]]
                yield [("x", xs), ("y", [int(line.split()[3])])]

            return it

    out = io.StringIO()
    stdin, stdout = sys.stdin, sys.stdout
    sys.stdin, sys.stdout = io.StringIO("1.5 2 3 1\n4 5 6 0\n"), out
    try:
        G().run_from_stdin()
    finally:
        sys.stdin, sys.stdout = stdin, stdout
    assert out.getvalue() == "3 1.5 2.0 3.0 1 1\n3 4.0 5.0 6.0 1 0\n"


def _model():
    main, start = fluid.Program(), fluid.Program()
    main.random_seed = start.random_seed = 1
    with fluid.program_guard(main, start), fluid.unique_name.guard():
        x = fluid.data("x", [None, 3])
        y = fluid.data("y", [None, 1])
        pred = fluid.layers.fc(x, 1)
        loss = fluid.layers.mean(fluid.layers.square_error_cost(pred, y))
        fluid.optimizer.SGD(0.1).minimize(loss)
    return main, start, x, y, loss


@pytest.mark.parametrize("kind", ["InMemoryDataset", "QueueDataset"])
def test_train_from_dataset_with_two_threads_fits_the_regression(tmp_path, kind, capsys):
    files = _write_files(tmp_path)
    main, start, x, y, loss = _model()
    dataset = fluid.DatasetFactory().create_dataset(kind)
    dataset.set_use_var([x, y])
    dataset.set_batch_size(8)
    dataset.set_thread(2)
    dataset.set_filelist(files)
    if kind == "InMemoryDataset":
        dataset.load_into_memory()
        assert dataset.get_memory_data_size() == 4 * 64
        dataset.local_shuffle()
    scope = fluid.Scope()
    exe = fluid.Executor(fluid.CPUPlace())
    with fluid.scope_guard(scope):
        exe.run(start)
        for _ in range(6):
            exe.train_from_dataset(
                main, dataset, thread=2, fetch_list=[loss], fetch_info=["loss"], print_period=8
            )
        w = np.array(scope.find_var(main.global_block().all_parameters()[0].name).get_tensor())
    np.testing.assert_allclose(w.ravel(), TRUE_W, atol=0.05)
    assert "loss:" in capsys.readouterr().out


def test_pipe_command_and_bad_lines(tmp_path):
    files = _write_files(tmp_path, n_files=1, rows=5)
    main, start, x, y, loss = _model()
    dataset = fluid.DatasetFactory().create_dataset("QueueDataset")
    dataset.set_use_var([x, y])
    dataset.set_pipe_command("head -n 3")
    dataset.set_filelist(files)
    dataset.set_batch_size(2)
    batches = list(dataset._all_batches())
    assert [b[0].shape for b in batches] == [(2, 3), (1, 3)]
    bad = tmp_path / "bad"
    bad.write_text("3 1 2 3 2 1\n")
    dataset.set_pipe_command("cat")
    dataset.set_filelist([str(bad)])
    with pytest.raises(ValueError, match="bad:1"):
        list(dataset._all_batches())
    with pytest.raises(ValueError, match="unknown dataset class"):
        fluid.DatasetFactory().create_dataset("BoxPSDataset")
    with pytest.raises(NotImplementedError, match="local shuffle"):
        dataset.local_shuffle()


def test_dataloader_from_dataset(tmp_path):
    files = _write_files(tmp_path, n_files=2, rows=6)
    main, start, x, y, loss = _model()
    dataset = fluid.DatasetFactory().create_dataset("InMemoryDataset")
    dataset.set_use_var([x, y])
    dataset.set_batch_size(4)
    dataset.set_filelist(files)
    dataset.load_into_memory()
    loader = fluid.io.DataLoader.from_dataset(dataset, fluid.cpu_places(1), drop_last=True)
    sizes = [np.asarray(d[0]["x"]).shape[0] for d in loader()]
    assert sizes == [4, 4, 4]


def test_py_reader_feeds_read_file_variables():
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        reader = fluid.layers.py_reader(
            capacity=4, shapes=[(-1, 3), (-1, 1)], dtypes=["float32", "int64"], name="r1"
        )
        reader = fluid.layers.double_buffer(reader)
        img, label = fluid.layers.read_file(reader)
        total = fluid.layers.reduce_sum(img)
    batch = [np.ones((2, 3), "float32"), np.zeros((2, 1), "int64")]
    reader.decorate_tensor_provider(lambda: iter([batch, batch]))
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(start)
    seen = []
    reader.start()
    try:
        while True:
            seen.append(float(exe.run(main, fetch_list=[total])[0]))
    except fluid.core.EOFException:
        reader.reset()
    assert seen == [6.0, 6.0]
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        a = fluid.data("a", [None, 2])
        r2 = fluid.layers.create_py_reader_by_data(capacity=2, feed_list=[a])
        assert fluid.layers.read_file(r2) is a
    with pytest.raises(ValueError, match="capacity"):
        fluid.layers.py_reader(0, [(-1, 1)], ["float32"])


PROTO = """name: "MultiSlotDataFeed"
batch_size: 2
multi_slot_desc {
    slots {
        name: "words"
        type: "uint64"
        is_dense: false
        is_used: true
    }
    slots {
        name: "label"
        type: "uint64"
        is_dense: false
        is_used: true
    }
}
"""


def test_data_feed_desc_round_trips_as_fluid(tmp_path):
    """Fluid 1.8.5 prints this after set_batch_size(128), set_dense_slots(['words'])."""
    path = tmp_path / "feed.proto"
    path.write_text(PROTO)
    desc = fluid.DataFeedDesc(str(path))
    desc.set_batch_size(128)
    desc.set_dense_slots(["words"])
    desc.set_use_slots(["label"])
    assert desc.desc() == (
        'name: "MultiSlotDataFeed"\nbatch_size: 128\nmulti_slot_desc {\n  slots {\n'
        '    name: "words"\n    type: "uint64"\n    is_dense: true\n    is_used: true\n  }\n'
        '  slots {\n    name: "label"\n    type: "uint64"\n    is_dense: false\n'
        '    is_used: true\n  }\n}\npipe_command: "cat"\n'
    )
    with pytest.raises(ValueError, match="no slot named"):
        desc.set_dense_slots(["nope"])


def test_train_from_dataset_shows_a_progress_bar_when_asked(tmp_path, monkeypatch, capsys):
    pytest.importorskip("tqdm")
    monkeypatch.setenv("OAR_PROGRESS", "1")
    main, start, x, y, loss = _model()
    dataset = fluid.DatasetFactory().create_dataset("QueueDataset")
    dataset.set_use_var([x, y])
    dataset.set_batch_size(8)
    dataset.set_thread(1)
    dataset.set_filelist(_write_files(tmp_path, n_files=1))
    scope = fluid.Scope()
    exe = fluid.Executor(fluid.CPUPlace())
    with fluid.scope_guard(scope):
        exe.run(start)
        exe.train_from_dataset(main, dataset, thread=1, fetch_list=[loss], print_period=100)
    err = capsys.readouterr().err
    assert "train_from_dataset (thread 0)" in err and "8batch" in err.replace(" ", "")
    assert "loss=" in err and "samples/s" in err
