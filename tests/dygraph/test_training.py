"""Training in dygraph: accuracy on a learnable task, state dicts, and the seed's exact resume check."""

import importlib.util
import pathlib
import sys

import numpy as np
import pytest
from oar import fluid

_spec = importlib.util.spec_from_file_location(
    "dygraph_test_models", pathlib.Path(__file__).with_name("_models.py")
)
_models = sys.modules.setdefault("dygraph_test_models", importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(_models)
MLP, batches, synthetic_mnist, train_step = (
    _models.MLP,
    _models.batches,
    _models.synthetic_mnist,
    _models.train_step,
)


def _adam(model, steps=100):
    lr = fluid.dygraph.PolynomialDecay(0.01, steps, 0.001)
    return fluid.optimizer.AdamOptimizer(
        learning_rate=lr,
        parameter_list=model.parameters(),
        regularization=fluid.regularizer.L2Decay(regularization_coeff=0.001),
    )


def test_mlp_reaches_95_percent():
    imgs, labels = synthetic_mnist(1200, seed=1)
    test_imgs, test_labels = synthetic_mnist(300, seed=2)
    with fluid.dygraph.guard():
        fluid.default_main_program().random_seed = 3
        model = MLP()
        model.train()
        opt = fluid.optimizer.AdamOptimizer(learning_rate=0.005, parameter_list=model.parameters())
        for _ in range(2):
            for img, lab in batches(imgs, labels, 50):
                train_step(model, opt, img, lab)
        model.eval()
        with fluid.dygraph.no_grad():
            _, acc = model(
                fluid.dygraph.to_variable(test_imgs), fluid.dygraph.to_variable(test_labels)
            )
        assert float(acc.numpy()[0]) > 0.95


def test_layer_state_dict_round_trip():
    with fluid.dygraph.guard():
        model = MLP()
        sd = model.state_dict()
        assert list(sd) == ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
        saved = {k: v.numpy() for k, v in sd.items()}
        other = MLP()
        assert not np.array_equal(other.fc1.weight.numpy(), saved["fc1.weight"])
        other.set_dict(saved)
        for k, v in other.state_dict().items():
            np.testing.assert_array_equal(v.numpy(), saved[k])
        with pytest.raises(KeyError, match="fc2.bias"):
            other.load_dict({k: v for k, v in saved.items() if k != "fc2.bias"})
        bad = dict(saved, **{"fc1.bias": np.zeros(3, "float32")})
        with pytest.raises(ValueError, match="shape"):
            other.load_dict(bad)


def test_layer_registration_and_modes():
    with fluid.dygraph.guard():
        model = MLP()
        assert len(model.parameters()) == 4
        assert [n for n, _ in model.named_parameters()] == [
            "fc1.weight",
            "fc1.bias",
            "fc2.weight",
            "fc2.bias",
        ]
        assert len(model.sublayers()) == 2
        model.eval()
        assert not model.fc1.training
        model.train()
        assert model.fc2.training
        extra = model.create_parameter([3], is_bias=True)
        model.add_parameter("extra", extra)
        assert model.extra is extra and len(model.parameters()) == 5
        seq = fluid.dygraph.Sequential(fluid.dygraph.Linear(4, 3), fluid.dygraph.Linear(3, 2))
        out = seq(fluid.dygraph.to_variable(np.ones((2, 4), "float32")))
        assert out.shape == [2, 2] and len(seq.parameters()) == 4
        ll = fluid.dygraph.LayerList([fluid.dygraph.Linear(2, 2) for _ in range(3)])
        assert len(ll) == 3 and len(ll.parameters()) == 6
        pl = fluid.dygraph.ParameterList([model.create_parameter([2]) for _ in range(2)])
        assert len(pl.parameters()) == 2


def test_optimizer_state_dict_layout():
    imgs, labels = synthetic_mnist(20)
    with fluid.dygraph.guard():
        model = MLP()
        opt = _adam(model)
        train_step(model, opt, imgs, labels)
        sd = opt.state_dict()
        assert sd["LR_Scheduler"] == {"step_num": 1}
        assert sd["global_step"].numpy().tolist() == [1]
        assert "linear_0.w_0_moment1_0" in sd and "linear_1.b_0_beta2_pow_acc_0" in sd


def _run(epochs_from, state=None, record_state_after_epoch=None):
    imgs, labels = synthetic_mnist(200, seed=5)
    losses = []
    saved = None
    with fluid.dygraph.guard():
        fluid.default_main_program().random_seed = 7
        model = MLP()
        opt = _adam(model, steps=40)
        if state is not None:
            model.load_dict(state[0])
            opt.set_dict(state[1])
        for epoch in range(epochs_from, 3):
            for img, lab in batches(imgs, labels, 20):
                losses.append(train_step(model, opt, img, lab)[0])
            if epoch == record_state_after_epoch:
                saved = (
                    {k: v.numpy() for k, v in model.state_dict().items()},
                    {
                        k: (v.numpy() if hasattr(v, "numpy") else dict(v))
                        for k, v in opt.state_dict().items()
                    },
                )
    return losses, saved


def test_resume_from_epoch0_is_exact():
    full, state = _run(0, record_state_after_epoch=0)
    resumed, _ = _run(1, state=state)
    assert len(resumed) == 20
    for a, b in zip(full[10:], resumed):
        assert np.array_equal(a, b), (a, b)


def test_resume_from_io_plugin_files(tmp_path):
    try:
        save, load = fluid.save_dygraph, fluid.load_dygraph
    except Exception:
        pytest.skip("oar-io (fluid.save_dygraph/load_dygraph) is not installed")
    full, _ = _run(0)
    imgs, labels = synthetic_mnist(200, seed=5)
    with fluid.dygraph.guard():
        fluid.default_main_program().random_seed = 7  # the same initial weights as _run's
        model = MLP()
        opt = _adam(model, steps=40)
        for img, lab in batches(imgs, labels, 20):
            train_step(model, opt, img, lab)
        save(model.state_dict(), str(tmp_path / "ckpt"))
        save(opt.state_dict(), str(tmp_path / "ckpt"))
    params, opt_state = load(str(tmp_path / "ckpt"))
    resumed, _ = _run(1, state=(params, opt_state))
    for a, b in zip(full[10:], resumed):
        assert np.array_equal(a, b)


def test_minimize_without_parameter_list_is_an_error():
    with fluid.dygraph.guard():
        model = MLP()
        opt = fluid.optimizer.SGDOptimizer(learning_rate=0.1)
        loss = fluid.layers.mean(
            model(fluid.dygraph.to_variable(np.ones((2, 1, 28, 28), "float32")))
        )
        loss.backward()
        with pytest.raises(ValueError, match="parameter_list"):
            opt.minimize(loss)


def test_traced_layer_runs_statically_with_equal_results():
    imgs, _ = synthetic_mnist(6, seed=9)
    with fluid.dygraph.guard():
        model = MLP()
        x = fluid.dygraph.to_variable(imgs)
        out, traced = fluid.dygraph.TracedLayer.trace(model, inputs=[x])
        assert [op.type for op in traced.program.global_block().ops][:2] == ["reshape2", "mul"]
        static_out = traced([imgs])[0]
        np.testing.assert_allclose(static_out, out.numpy(), rtol=1e-6, atol=1e-7)
        # parameters stay shared: after an update the traced program sees the new values
        opt = fluid.optimizer.SGDOptimizer(learning_rate=0.5, parameter_list=model.parameters())
        loss = fluid.layers.mean(model(x))
        loss.backward()
        opt.minimize(loss)
        np.testing.assert_allclose(traced([imgs])[0], model(x).numpy(), rtol=1e-6, atol=1e-7)


def test_traced_layer_save_inference_model(tmp_path):
    pytest.importorskip("oar_io")
    with fluid.dygraph.guard():
        lin = fluid.dygraph.Linear(4, 2, act="softmax")
        x = fluid.dygraph.to_variable(np.ones((3, 4), "float32"))
        out, traced = fluid.dygraph.TracedLayer.trace(lin, inputs=[x])
        traced.save_inference_model(str(tmp_path))
    exe = fluid.Executor(fluid.CPUPlace())
    prog, feeds, fetches = fluid.io.load_inference_model(str(tmp_path), exe)
    got = exe.run(prog, feed={feeds[0]: np.ones((3, 4), "float32")}, fetch_list=fetches)[0]
    np.testing.assert_allclose(got, out.numpy(), rtol=1e-6)
