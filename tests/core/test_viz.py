"""oar.viz: scalar logs read back, PNG plots, DOT graphs, summaries, progress bars."""

from __future__ import annotations

import io
import re
import struct
import subprocess
import sys

import numpy as np
import oar
import pytest
from oar import fluid
from oar.viz import draw_block_graphviz, plot_scalars, program_to_dot, read_scalars


def _mlp_program():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data("x", [None, 4], "float32")
        h = fluid.layers.fc(x, 8, act="relu")
        y = fluid.layers.fc(h, 2)
        loss = fluid.layers.mean(y)
    return main, startup, loss


def test_log_writer_scalars_histograms_images_text_read_back(tmp_path):
    pytest.importorskip("tensorboardX")
    from oar.viz import LogWriter
    from oar.viz.event_reader import _records, event_files
    from tensorboardX.proto import event_pb2

    with LogWriter(str(tmp_path)) as writer:
        for step in range(5):
            # the seed's call: keyword arguments, value a 1-element array (avg_loss.numpy())
            writer.add_scalar(tag="loss", step=step, value=np.array([1.0 / (step + 1)]))
            writer.add_scalar("acc", step * 0.1, step)
        writer.add_histogram("w", np.arange(100.0), 0, buckets=5)
        writer.add_image("img", np.zeros((4, 6, 3), "uint8"), 0)
        writer.add_text("note", "hello", 0)
    scalars = read_scalars(tmp_path)
    assert [s for s, _ in scalars["loss"]] == [0, 1, 2, 3, 4]
    np.testing.assert_allclose(
        [v for _, v in scalars["loss"]], [1, 1 / 2, 1 / 3, 1 / 4, 1 / 5], rtol=1e-6
    )
    np.testing.assert_allclose([v for _, v in scalars["acc"]], [0, 0.1, 0.2, 0.3, 0.4], atol=1e-6)
    kinds = set()
    for path in event_files(tmp_path):
        for raw in _records(path):
            for value in event_pb2.Event.FromString(raw).summary.value:
                kinds.add((value.tag, value.WhichOneof("value")))
    assert ("w", "histo") in kinds and ("img", "image") in kinds
    assert any(tag.startswith("note") for tag, _ in kinds)
    with pytest.raises(ValueError, match="add_scalar\\('bad'\\): value must hold one number"):
        LogWriter(str(tmp_path / "b")).add_scalar("bad", np.ones(3), 0)


def test_corrupt_event_file_is_refused(tmp_path):
    pytest.importorskip("tensorboardX")
    from oar.viz import LogWriter

    with LogWriter(str(tmp_path)) as writer:
        writer.add_scalar("loss", 1.0, 0)
    (path,) = list(tmp_path.rglob("events.out.tfevents.*"))
    data = bytearray(path.read_bytes())
    data[-6] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="corrupt record"):
        read_scalars(tmp_path)


def test_plot_scalars_writes_a_png_of_the_requested_size(tmp_path):
    pytest.importorskip("matplotlib")
    out = plot_scalars(
        {"loss": [3.0, 2.0, 1.5, 1.2], "acc": [(0, 0.1), (2, 0.5), (4, 0.9)]},
        tmp_path / "curves.png",
        size=(4, 3),
        dpi=50,
    )
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    assert struct.unpack(">II", data[16:24]) == (200, 150)
    with pytest.raises(ValueError, match="no scalars for tags \\['nope'\\]"):
        plot_scalars({"loss": [1.0]}, tmp_path / "x.png", tags=["nope"])


DOT_LINE = re.compile(
    r'^\s*("[^"]*"( -> "[^"]*")? *(\[.*\])?;|subgraph "[^"]*" \{|label="[^"]*";|\}|'
    r'digraph "[^"]*" \{|rankdir=TB;|node \[.*\];)$'
)


def test_program_to_dot_has_a_node_per_op_and_variable_and_an_edge_per_use():
    main, _, _ = _mlp_program()
    block = main.global_block()
    text = program_to_dot(main)
    bad = [line for line in text.splitlines() if not DOT_LINE.match(line)]
    assert not bad, bad  # a grammar check of the subset of DOT we write
    op_nodes = re.findall(r'^\s*"op:[^"]*" \[', text, re.M)
    var_nodes = re.findall(r'^\s*"var:[^"]*" \[', text, re.M)
    edges = re.findall(r" -> ", text)
    names = {
        n for op in block.ops for d in (op.inputs, op.outputs) for ns in d.values() for n in ns
    }
    assert len(op_nodes) == len(block.ops)
    assert len(var_nodes) == len(names)
    uses = sum(len(ns) for op in block.ops for d in (op.inputs, op.outputs) for ns in d.values())
    assert len(edges) == uses
    # parameters are highlighted, shapes shown
    w = block.all_parameters()[0].name
    assert re.search(
        rf'"var:{re.escape(w)}" \[label="{re.escape(w)}\\\\n\[4, 8\] float32", shape=ellipse, style=filled',
        text,
    )
    graphviz = pytest.importorskip("graphviz")
    assert graphviz.Source(text).source == text


def test_draw_block_graphviz_writes_dot_with_highlights(tmp_path):
    main, _, loss = _mlp_program()
    path = fluid.debugger.draw_block_graphviz(
        main.global_block(), highlights=[loss.name], path=str(tmp_path / "g.dot")
    )
    text = open(path).read()
    assert f'"var:{loss.name}"' in text and "#f4a6a6" in text
    assert draw_block_graphviz is fluid.debugger.draw_block_graphviz


def test_oar_program_dot_on_a_saved_model(tmp_path):
    pytest.importorskip("oar_io")
    main, startup, loss = _mlp_program()
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    with fluid.scope_guard(scope):
        exe.run(startup)
        fluid.io.save_inference_model(str(tmp_path / "m"), ["x"], [loss], exe, main_program=main)
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "oar",
            "program",
            "dot",
            str(tmp_path / "m"),
            "-o",
            str(tmp_path / "m.dot"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    text = (tmp_path / "m.dot").read_text()
    assert text.startswith('digraph "program"') and '"mul"' in text and '"relu"' in text


def test_summary_of_a_program_counts_every_parameter_once():
    main, _, _ = _mlp_program()
    out = io.StringIO()
    info = oar.summary(main, file=out)
    expected = sum(int(np.prod(p.shape)) for p in main.global_block().all_parameters())
    assert info["total_params"] == expected == 4 * 8 + 8 + 8 * 2 + 2
    assert info["total_bytes"] == expected * 4
    assert f"Total params: {expected:,}" in out.getvalue()


def test_summary_of_a_dygraph_layer_shows_output_shapes():
    from oar.fluid.dygraph import Conv2D, Layer, Linear, Pool2D

    class Net(Layer):
        def __init__(self):
            super().__init__()
            self.conv = Conv2D(1, 4, 3)
            self.pool = Pool2D(2, pool_stride=2)
            self.fc = Linear(4 * 3 * 3, 10)

        def forward(self, x):
            h = self.pool(self.conv(x))
            return self.fc(fluid.layers.reshape(h, [-1, 4 * 3 * 3]))

    with fluid.dygraph.guard():
        net = Net()
        expected = sum(int(np.prod(p.shape)) for p in net.parameters())
    out = io.StringIO()
    info = oar.summary(net, (-1, 1, 8, 8), file=out)
    assert info["total_params"] == expected == 4 * 9 + 4 + 36 * 10 + 10
    rows = {name: (kind, shape, count) for name, kind, shape, count in info["rows"]}
    assert rows["conv"] == ("Conv2D", [1, 4, 6, 6], 40)
    assert rows["pool"][1] == [1, 4, 3, 3] and rows["fc"] == ("Linear", [1, 10], 370)


def test_progress_bar_shows_batches_rate_and_loss():
    pytest.importorskip("tqdm")
    from oar.viz import progress

    stream = io.StringIO()
    batches = [np.zeros((8, 3)) for _ in range(4)]
    bar = progress(batches, desc="epoch 0", file=stream, mininterval=0)
    seen = 0
    for batch in bar:
        seen += len(batch)
        bar.set_loss(np.array([0.5]))
    text = stream.getvalue()
    assert seen == 32
    assert "epoch 0" in text and "4/4" in text and "samples/s" in text and "loss=0.5" in text


def test_maybe_progress_is_off_by_default(monkeypatch):
    from oar.viz.progress_bar import maybe_progress

    data = [1, 2]
    monkeypatch.delenv("OAR_PROGRESS", raising=False)
    assert maybe_progress(data) is data
    monkeypatch.setenv("OAR_PROGRESS", "1")
    pytest.importorskip("tqdm")
    assert maybe_progress(data) is not data


def test_reprs_show_what_a_user_wants_at_a_prompt():
    from oar import SelectedRows

    main, _, _ = _mlp_program()
    text = repr(main)
    assert "mul x2" in text and "relu" in text and "4 parameters" in text
    t = fluid.create_lod_tensor(
        np.arange(6, dtype="float32").reshape(3, 2), [[1, 2]], fluid.CPUPlace()
    )
    assert repr(t).startswith("LoDTensor(shape=[3, 2], dtype=float32, lod=[[0, 1, 3]],")
    assert "[4. 5.]" in repr(t)
    assert "not initialized" in repr(fluid.LoDTensor())
    scope = fluid.Scope()
    scope.var("w")
    assert repr(scope) == "<Scope 1 vars [w], 0 kids>"
    rows = SelectedRows([1, 3], 5, np.ones((2, 3)))
    assert repr(rows) == "SelectedRows(height=5, rows=[1, 3], value shape=[2, 3], dtype=float64)"


def test_oar_progress_env_puts_a_bar_on_loaders_and_batch_readers(tmp_path):
    pytest.importorskip("tqdm")
    pytest.importorskip("oar_data")
    script = tmp_path / "loop.py"
    script.write_text(
        "import numpy as np, oar\n"
        "from oar import fluid\n"
        "reader = oar.batch(lambda: iter([(np.ones(2, 'float32'),)] * 8), 4)\n"
        "print(sum(len(b) for b in reader()))\n"
        "main = fluid.Program()\n"
        "with fluid.program_guard(main, fluid.Program()):\n"
        "    x = fluid.data('x', [None, 2], 'float32')\n"
        "    loader = fluid.io.DataLoader.from_generator(feed_list=[x], capacity=2, iterable=True)\n"
        "loader.set_batch_generator(lambda: iter([[np.ones((4, 2), 'float32')]] * 3), fluid.CPUPlace())\n"
        "it = loader()\n"
        "first = next(it)\n"
        "print(1 + sum(1 for _ in it))\n"
    )
    env = {k: v for k, v in __import__("os").environ.items() if not k.startswith("OAR_DISABLE")}
    quiet = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=60, env=env
    )
    assert quiet.returncode == 0, quiet.stderr
    assert quiet.stdout.split() == ["8", "3"] and "samples/s" not in quiet.stderr
    env["OAR_PROGRESS"] = "1"
    shown = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=60, env=env
    )
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.split() == ["8", "3"]
    assert (
        "batch(4)" in shown.stderr and "DataLoader" in shown.stderr and "samples/s" in shown.stderr
    )


def test_sub_blocks_of_a_while_loop_are_clusters():
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        i = fluid.layers.fill_constant([1], "int64", 0)
        n = fluid.layers.fill_constant([1], "int64", 3)
        cond = fluid.layers.less_than(i, n)
        loop = fluid.layers.While(cond)
        with loop.block():
            fluid.layers.increment(i, in_place=True)
            fluid.layers.less_than(i, n, cond=cond)
    text = program_to_dot(main)
    assert text.count('subgraph "cluster_block_1"') == 1 and 'label="block 1 (while)";' in text
    body = text.split('subgraph "cluster_block_1" {')[1]
    assert '"op:1:0" [label="increment"' in body and '"op:1:1" [label="less_than"' in body
    bad = [line for line in text.splitlines() if not DOT_LINE.match(line)]
    assert not bad, bad
