"""``fluid.dygraph.StaticModelRunner``: a model saved by ``save_inference_model`` runs and trains
as a dygraph Layer (Fluid 1.8.5 facts: parameters are ParamBase named ``<name>@LOADED``, which
are also the state-dict keys; batch norm's moving statistics take no gradient; ``eval()`` gives
the inference program's output; inputs are positional, numpy arrays or variables)."""

from pathlib import Path

import numpy as np
import pytest
from oar import fluid
from oar.errors import OarError

pytest.importorskip("oar_io")
DATA = Path(__file__).parents[1] / "scenarios" / "data"
rng = np.random.default_rng(5)


def _save(dirname, two_heads=False, **names):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data("img", [None, 6], "float32")
        h = fluid.layers.batch_norm(fluid.layers.fc(x, 8, act="relu"))
        y = fluid.layers.fc(h, 3)
        feeds, fetches = ["img"], [y]
        if two_heads:
            z = fluid.data("z", [None, 3], "float32")
            feeds, fetches = ["img", "z"], [y, fluid.layers.elementwise_add(y, z)]
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    with fluid.scope_guard(scope):
        fluid.io.save_inference_model(str(dirname), feeds, fetches, exe, main, **names)
        prog, _, targets = fluid.io.load_inference_model(str(dirname), exe, **names)
    return lambda feed: exe.run(prog, feed=feed, fetch_list=targets, scope=scope)


def test_loaded_model_matches_static_inference_and_trains(tmp_path):
    infer = _save(tmp_path)
    x = rng.uniform(-1, 1, (8, 6)).astype("float32")
    label = rng.integers(0, 3, (8, 1)).astype("int64")
    (want,) = infer({"img": x})
    with fluid.dygraph.guard():
        runner = fluid.dygraph.StaticModelRunner(str(tmp_path))
        params = runner.parameters()
        names = {"fc_0.w_0", "fc_0.b_0", "fc_1.w_0", "fc_1.b_0"}
        names |= {f"batch_norm_0.{s}" for s in ("w_0", "b_0", "w_1", "w_2")}
        assert {p.name for p in params} == {n + "@LOADED" for n in names}
        assert all(isinstance(p, fluid.dygraph.ParamBase) for p in params)
        assert set(runner.state_dict()) == {p.name for p in params}
        frozen = {p.name for p in params if p.stop_gradient}
        assert frozen == {"batch_norm_0.w_1@LOADED", "batch_norm_0.w_2@LOADED"}

        runner.eval()
        np.testing.assert_allclose(runner(x).numpy(), want, rtol=1e-5, atol=1e-6)

        runner.train()  # batch statistics, and the moving ones are updated
        moving = runner.state_dict()["batch_norm_0.w_1@LOADED"].numpy().copy()
        opt = fluid.optimizer.SGD(0.5, parameter_list=params)
        losses = []
        for _ in range(6):
            out = runner(fluid.dygraph.to_variable(x))
            loss = fluid.layers.mean(
                fluid.layers.softmax_with_cross_entropy(out, fluid.dygraph.to_variable(label))
            )
            loss.backward()
            assert all((p.gradient() is None) == p.stop_gradient for p in params)
            opt.minimize(loss)
            runner.clear_gradients()
            losses.append(float(loss.numpy()[0]))
        assert losses[-1] < 0.8 * losses[0], losses
        assert not np.allclose(runner.state_dict()["batch_norm_0.w_1@LOADED"].numpy(), moving)


def test_several_inputs_and_outputs_with_file_names(tmp_path):
    infer = _save(tmp_path, two_heads=True, model_filename="m", params_filename="p")
    x = rng.uniform(-1, 1, (3, 6)).astype("float32")
    z = rng.uniform(-1, 1, (3, 3)).astype("float32")
    want = infer({"img": x, "z": z})
    with fluid.dygraph.guard():
        runner = fluid.dygraph.static_runner.StaticModelRunner(
            str(tmp_path), model_filename="m", params_filename="p"
        )
        runner.eval()
        got = runner(fluid.dygraph.to_variable(x), z)
        assert isinstance(got, list) and len(got) == 2
        for g, w in zip(got, want):
            np.testing.assert_allclose(g.numpy(), w, rtol=1e-5, atol=1e-6)
        with pytest.raises(OarError, match="takes 2 inputs"):
            runner(x)
        with pytest.raises(OarError, match="numpy array or a dygraph variable"):
            runner(x, [1, 2, 3])
        with pytest.raises(OarError, match="no directory"):
            fluid.dygraph.StaticModelRunner(str(tmp_path / "nope"))


def test_a_variable_without_a_value_is_named(tmp_path):
    _save(tmp_path)
    (tmp_path / "fc_1.w_0").unlink()  # as if the saved values were incomplete
    with fluid.dygraph.guard():
        with pytest.raises(OarError, match="fc_1.w_0"):
            fluid.dygraph.StaticModelRunner(str(tmp_path))


def test_a_model_saved_by_fluid18_runs_and_takes_gradients():
    io = np.load(DATA / "fluid18_cnn_io.npz")
    with fluid.dygraph.guard():
        runner = fluid.dygraph.StaticModelRunner(
            str(DATA / "fluid18_cnn_model"), params_filename="params"
        )
        runner.eval()
        out = runner(io["x"])
        np.testing.assert_allclose(out.numpy(), io["out"], rtol=1e-4, atol=1e-6)
        fluid.layers.reduce_sum(out * out).backward()
        trainable = [p for p in runner.parameters() if not p.stop_gradient]
        assert trainable and all(p.gradient() is not None for p in trainable)


def test_reachable_but_not_in_all_as_in_fluid18():
    assert "StaticModelRunner" not in fluid.dygraph.__all__
    assert "StaticModelRunner" in dir(fluid.dygraph)
    assert issubclass(fluid.dygraph.StaticModelRunner, fluid.dygraph.Layer)
