"""The Fluid 1.8 predictor API: AnalysisConfig, create_paddle_predictor, PaddleTensor, zero copy."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from models import reference
from oar import fluid

core = fluid.core


@pytest.mark.parametrize("name", ["fit_a_line", "mlp", "mnist_cnn"])
@pytest.mark.parametrize("ir_optim", [False, True])
def test_zero_copy_equals_executor_run(scenario_models, name, ir_optim):
    dirname, feeds = scenario_models[name]
    feed = feeds(np.random.default_rng(5), 4)
    (want,), _ = reference(dirname, feed)
    config = core.AnalysisConfig(dirname)
    config.disable_gpu()
    config.switch_ir_optim(ir_optim)
    config.switch_use_feed_fetch_ops(False)
    config.switch_specify_input_names(True)
    config.enable_memory_optim()
    config.set_cpu_math_library_num_threads(1)
    pred = core.create_paddle_predictor(config)
    assert pred.get_input_names() == list(feed)
    for n, arr in feed.items():
        t = pred.get_input_tensor(n)
        t.reshape(arr.shape)
        t.copy_from_cpu(arr)
    assert pred.zero_copy_run()
    out = pred.get_output_tensor(pred.get_output_names()[0])
    got = out.copy_to_cpu()
    assert out.shape() == list(want.shape)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    if ir_optim:
        assert sum(pred.pass_stats.values()) > 0  # the passes did rewrite something
    else:
        assert pred.pass_stats == {}


def test_run_with_paddle_tensors(scenario_models):
    dirname, feeds = scenario_models["mlp"]
    feed = feeds(np.random.default_rng(1), 3)
    (want,), _ = reference(dirname, feed)
    pred = core.create_paddle_predictor(core.AnalysisConfig(dirname))
    t = core.PaddleTensor(feed["img"])
    assert t.dtype == core.PaddleDType.FLOAT32 and t.shape == [3, 784]
    (out,) = pred.run([t])  # positional: the tensor has no name
    assert isinstance(out, core.PaddleTensor) and out.name == pred.get_output_names()[0]
    np.testing.assert_allclose(out.as_ndarray(), want, rtol=1e-5, atol=1e-6)
    named = core.PaddleTensor(feed["img"], name="img")
    np.testing.assert_allclose(pred.run([named])[0].as_ndarray(), want, rtol=1e-5, atol=1e-6)
    assert len(out.data.float_data()) == want.size


def test_prog_file_and_params_file(scenario_models, tmp_path):
    from models import mlp

    dirname, feeds = mlp(str(tmp_path / "m"), model_filename="model", params_filename="params")
    feed = feeds(np.random.default_rng(2), 2)
    (want,), _ = reference(dirname, feed, model_filename="model", params_filename="params")
    pred = core.create_paddle_predictor(
        core.AnalysisConfig(f"{dirname}/model", f"{dirname}/params")
    )
    pred.get_input_tensor("img").copy_from_cpu(feed["img"])
    pred.zero_copy_run()
    got = pred.get_output_tensor(pred.get_output_names()[0]).copy_to_cpu()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_clones_in_four_threads_share_weights_and_agree(scenario_models):
    dirname, feeds = scenario_models["mnist_cnn"]
    main = core.create_paddle_predictor(core.AnalysisConfig(dirname))
    clones = [main.clone() for _ in range(4)]
    assert all(c.scope() is main.scope() for c in clones)  # weights shared, not copied
    inputs = [feeds(np.random.default_rng(10 + i), 2)["img"] for i in range(4)]
    wants = [reference(dirname, {"img": x})[0][0] for x in inputs]
    errors, barrier = [], threading.Barrier(4)

    def serve(i):
        try:
            pred = clones[i]
            barrier.wait(timeout=30)
            for _ in range(5):
                pred.get_input_tensor("img").copy_from_cpu(inputs[i])
                pred.zero_copy_run()
                got = pred.get_output_tensor(pred.get_output_names()[0]).copy_to_cpu()
                np.testing.assert_allclose(got, wants[i], rtol=1e-5, atol=1e-6)
        except Exception as exc:  # reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=serve, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads)
    assert not errors, errors


def test_zero_copy_tensor_with_lod(tmp_path):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        words = fluid.layers.data(name="words", shape=[1], dtype="int64", lod_level=1)
        emb = fluid.layers.embedding(words, size=[20, 4])
        pooled = fluid.layers.sequence_pool(emb, pool_type="sum")
        out = fluid.layers.fc(pooled, size=2, act="softmax")
    scope, exe = fluid.Scope(), fluid.Executor(fluid.CPUPlace())
    ids = np.array([[1], [2], [3], [4], [5]], dtype="int64")
    with fluid.scope_guard(scope):
        exe.run(startup)
        lt = fluid.create_lod_tensor(ids, [[2, 3]], fluid.CPUPlace())
        (want,) = exe.run(main, feed={"words": lt}, fetch_list=[out])
        fluid.io.save_inference_model(str(tmp_path), ["words"], [out], exe, main)
    pred = core.create_paddle_predictor(core.AnalysisConfig(str(tmp_path)))
    t = pred.get_input_tensor("words")
    t.copy_from_cpu(ids)
    t.set_lod([[0, 2, 5]])
    assert t.lod() == [[0, 2, 5]]
    pred.zero_copy_run()
    got = pred.get_output_tensor(pred.get_output_names()[0]).copy_to_cpu()
    assert got.shape == (2, 2)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="offsets"):
        t.set_lod([[1, 2]])


def test_clear_errors(scenario_models):
    dirname, _ = scenario_models["fit_a_line"]
    pred = core.create_paddle_predictor(core.AnalysisConfig(dirname))
    with pytest.raises(KeyError, match="'nope'.*inputs are \\['x'\\]"):
        pred.get_input_tensor("nope")
    with pytest.raises(TypeError, match="float32.*float64.*astype"):
        pred.get_input_tensor("x").copy_from_cpu(np.zeros((1, 13)))
    with pytest.raises(ValueError, match="copy_from_cpu"):
        pred.clone().zero_copy_run()
    with pytest.raises(ValueError, match="names no model"):
        core.create_paddle_predictor(core.AnalysisConfig())
    with pytest.raises(TypeError, match="AnalysisConfig"):
        core.create_paddle_predictor(dirname)


def test_config_accessors_and_pass_builder(tmp_path):
    c = core.AnalysisConfig(str(tmp_path))
    assert c.model_dir() == str(tmp_path) and c.ir_optim() and not c.use_gpu()
    c.enable_use_gpu(100, 0)
    assert c.use_gpu() and c.gpu_device_id() == 0
    c.disable_gpu()
    c.switch_use_feed_fetch_ops(False)
    assert not c.use_feed_fetch_ops_enabled()
    c.set_cpu_math_library_num_threads(2)
    assert c.cpu_math_library_num_threads() == 2
    passes = c.pass_builder().all_passes()
    assert "fc_fuse_pass" in passes and "conv_bn_fuse_pass" in passes
    c.delete_pass("fc_fuse_pass")
    assert "fc_fuse_pass" not in c.pass_builder().all_passes()
    c2 = core.AnalysisConfig(str(tmp_path / "a"), str(tmp_path / "b"))
    assert c2.prog_file().endswith("a") and c2.params_file().endswith("b")


def test_model_saved_by_fluid_1_8_with_passes():
    """The CNN trained and saved by Fluid 1.8.5 (tests/scenarios/data) gives Fluid's outputs."""
    from pathlib import Path

    data = Path(__file__).parents[1] / "scenarios" / "data"
    model = data / "fluid18_cnn_model"
    io = np.load(data / "fluid18_cnn_io.npz")
    for ir_optim in (False, True):
        config = core.AnalysisConfig(str(model / "__model__"), str(model / "params"))
        config.switch_ir_optim(ir_optim)
        pred = core.create_paddle_predictor(config)
        pred.get_input_tensor(pred.get_input_names()[0]).copy_from_cpu(io["x"])
        pred.zero_copy_run()
        got = pred.get_output_tensor(pred.get_output_names()[0]).copy_to_cpu()
        np.testing.assert_allclose(got, io["out"], rtol=1e-4, atol=1e-5)
    assert pred.pass_stats["conv_bn_fuse_pass"] >= 1


def test_paddle3_layout_pdmodel_pdiparams(tmp_path):
    """A ``.pdmodel`` + ``.pdiparams`` pair (Paddle 2.x/3.x layout): by directory or by files."""
    from models import mlp

    dirname, feeds = mlp(
        str(tmp_path / "p3"),
        model_filename="inference.pdmodel",
        params_filename="inference.pdiparams",
    )
    feed = feeds(np.random.default_rng(3), 2)
    (want,), _ = reference(
        dirname, feed, model_filename="inference.pdmodel", params_filename="inference.pdiparams"
    )
    for config in (
        core.AnalysisConfig(dirname),
        core.AnalysisConfig(f"{dirname}/inference.pdmodel", f"{dirname}/inference.pdiparams"),
    ):
        pred = core.create_paddle_predictor(config)
        (out,) = pred.run([core.PaddleTensor(feed["img"])])
        np.testing.assert_allclose(out.as_ndarray(), want, rtol=1e-5, atol=1e-6)


def test_without_oar_deploy_the_names_say_what_to_install():
    import subprocess
    import sys

    code = (
        "from oar import fluid\n"
        "from oar.errors import MissingPluginError\n"
        "try:\n    fluid.core.AnalysisConfig\n"
        "except MissingPluginError as exc:\n    print('pip install oar-deploy' in str(exc))\n"
    )
    env = {**__import__("os").environ, "OAR_DISABLE_PLUGINS": "oar-deploy"}
    r = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "True"
