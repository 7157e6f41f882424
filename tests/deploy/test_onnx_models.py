"""ONNX export of the scenario models (as saved, and after the inference passes), errors, CLI."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from models import reference
from oar import fluid

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")


def _ort(path, feed):
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return sess.run(None, feed)


@pytest.mark.parametrize("name", ["fit_a_line", "mlp", "mnist_cnn"])
@pytest.mark.parametrize("optimized", [False, True], ids=["as-saved", "after-passes"])
def test_scenario_model_round_trip(scenario_models, tmp_path, name, optimized):
    import oar.onnx

    dirname, feeds = scenario_models[name]
    feed = feeds(np.random.default_rng(4), 3)
    (want,), prog = reference(dirname, feed)
    if optimized:
        pred = fluid.core.create_paddle_predictor(fluid.core.AnalysisConfig(dirname))
        prog, scope = pred.program(), pred.scope()
        fetches = pred.get_output_names()
        types = {op.type for op in prog.global_block().ops}
        assert "fc" in types
    else:
        scope, exe = fluid.Scope(), fluid.Executor(fluid.CPUPlace())
        with fluid.scope_guard(scope):
            prog, _, fetch_vars = fluid.io.load_inference_model(dirname, exe)
        fetches = fetch_vars
    model = oar.onnx.export(prog, list(feed), fetches, scope, str(tmp_path / "m.onnx"))
    assert model.opset_import[0].version == oar.onnx.DEFAULT_OPSET
    (got,) = _ort(tmp_path / "m.onnx", feed)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    # batch size is symbolic: another batch size runs too
    feed5 = feeds(np.random.default_rng(5), 5)
    assert _ort(tmp_path / "m.onnx", feed5)[0].shape[0] == 5


def test_model_trained_by_fluid_1_8_exports(tmp_path):
    """The Fluid 1.8.5-saved CNN (conv, bn, lrn, bilinear_interp, adaptive pool, conv2d_transpose,
    layer_norm, dropout, fc) exports; onnxruntime gives Fluid's own outputs."""
    from pathlib import Path

    import oar.onnx

    data = Path(__file__).parents[1] / "scenarios" / "data"
    io = np.load(data / "fluid18_cnn_io.npz")
    scope, exe = fluid.Scope(), fluid.Executor(fluid.CPUPlace())
    with fluid.scope_guard(scope):
        prog, feeds, fetches = fluid.io.load_inference_model(
            str(data / "fluid18_cnn_model"), exe, params_filename="params"
        )
    oar.onnx.export(prog, feeds, fetches, scope, str(tmp_path / "m.onnx"))
    (got,) = _ort(tmp_path / "m.onnx", {feeds[0]: io["x"]})
    np.testing.assert_allclose(got, io["out"], rtol=1e-4, atol=1e-6)


def test_unsupported_ops_are_named(tmp_path):
    import oar.onnx

    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        x = fluid.data(name="x", shape=[None, 4], dtype="float32")
        vals, _ = fluid.layers.topk(fluid.layers.relu(x), k=2)
        out = fluid.layers.cumsum(vals)
    with pytest.raises(oar.onnx.UnsupportedOpError, match=r"\['cumsum', 'top_k'\]") as info:
        oar.onnx.export(main, ["x"], [out], fluid.Scope(), str(tmp_path / "m.onnx"))
    assert info.value.ops == ["cumsum", "top_k"]
    assert "relu" in str(info.value)  # the supported list is part of the message
    assert not (tmp_path / "m.onnx").exists()


def test_unsupported_attribute_names_the_op_and_line(tmp_path):
    import oar.onnx

    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        x = fluid.data(name="x", shape=[None, 3, 8, 8], dtype="float32")
        out = fluid.layers.adaptive_pool2d(x, 3, "max")
    with pytest.raises(oar.onnx.UnsupportedOpError, match="pool2d.*test_onnx_models.py.*adaptive"):
        oar.onnx.export(main, ["x"], [out], fluid.Scope(), str(tmp_path / "m.onnx"))


def test_opset_range(scenario_models, tmp_path):
    import oar.onnx

    dirname, feeds = scenario_models["fit_a_line"]
    scope, exe = fluid.Scope(), fluid.Executor(fluid.CPUPlace())
    with fluid.scope_guard(scope):
        prog, feed_names, fetches = fluid.io.load_inference_model(dirname, exe)
    m = oar.onnx.export(prog, feed_names, fetches, scope, str(tmp_path / "a.onnx"), opset=17)
    assert m.opset_import[0].version == 17
    with pytest.raises(ValueError, match="opset 9 is not supported"):
        oar.onnx.export(prog, feed_names, fetches, scope, str(tmp_path / "b.onnx"), opset=9)


def _oar(*args):
    return subprocess.run(
        [sys.executable, "-m", "oar", *args], capture_output=True, text=True, timeout=120
    )


def test_cli_export_onnx_and_model_commands(scenario_models, tmp_path):
    dirname, feeds = scenario_models["mnist_cnn"]
    feed = feeds(np.random.default_rng(6), 2)
    (want,), _ = reference(dirname, feed)
    out = tmp_path / "cnn.onnx"
    r = _oar("export", "onnx", dirname, str(out), "--opset", "13")
    assert r.returncode == 0, r.stderr
    np.testing.assert_allclose(_ort(out, feed)[0], want, rtol=1e-5, atol=1e-6)

    r = _oar("model", "show", dirname)
    assert r.returncode == 0, r.stderr
    assert "img" in r.stdout and "[-1, 1, 28, 28]" in r.stdout and "batch_norm" in r.stdout
    assert "parameters:" in r.stdout and "bytes" in r.stdout

    np.save(tmp_path / "img.npy", feed["img"])
    r = _oar(
        "model",
        "run",
        dirname,
        "--input",
        f"img={tmp_path / 'img.npy'}",
        "--save",
        str(tmp_path / "out.npz"),
    )
    assert r.returncode == 0, r.stderr
    saved = np.load(tmp_path / "out.npz")
    np.testing.assert_allclose(saved[saved.files[0]], want, rtol=1e-5, atol=1e-6)
