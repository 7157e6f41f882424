"""Seed 004's resume-training recipe with real dygraph layers: save_dygraph, load_dygraph, continue.

Skipped where oar's dygraph (another plugin area) is not available yet.
"""

from __future__ import annotations

import numpy as np
import pytest
from oar import fluid

dygraph = pytest.importorskip("oar.dygraph")
if not hasattr(dygraph, "Linear") or not hasattr(dygraph, "PolynomialDecay"):
    pytest.skip("oar.dygraph has no Linear / PolynomialDecay yet", allow_module_level=True)


def _data(i):
    rng = np.random.default_rng(i)
    x = rng.uniform(-1, 1, (8, 5)).astype("float32")
    return x, (x.sum(1, keepdims=True) * 0.5).astype("float32")


class _Net(dygraph.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = dygraph.Linear(5, 6, act="relu")
        self.fc2 = dygraph.Linear(6, 1)

    def forward(self, x):
        return self.fc2(self.fc1(x))


def _step(model, opt, i):
    x, y = _data(i)
    loss = fluid.layers.mean(
        fluid.layers.square_error_cost(model(dygraph.to_variable(x)), dygraph.to_variable(y))
    )
    loss.backward()
    opt.minimize(loss)
    model.clear_gradients()
    return float(loss.numpy()[0])


def _make():
    model = _Net()
    lr = dygraph.PolynomialDecay(0.01, 100, 0.001)
    opt = fluid.optimizer.AdamOptimizer(learning_rate=lr, parameter_list=model.parameters())
    return model, opt


def test_resume_training_matches_uninterrupted(tmp_path):
    with dygraph.guard():
        model, opt = _make()
        init = {k: v.numpy().copy() for k, v in model.state_dict().items()}
        full = [_step(model, opt, i) for i in range(6)]
    with dygraph.guard():
        model, opt = _make()
        model.set_dict(init)
        first = [_step(model, opt, i) for i in range(3)]
        path = str(tmp_path / "checkpoint" / "mnist_epoch0")
        fluid.save_dygraph(model.state_dict(), path)
        fluid.save_dygraph(opt.state_dict(), path)
    with dygraph.guard():
        params_dict, opt_dict = fluid.load_dygraph(path)
        model, opt = _make()
        model.load_dict(params_dict)
        opt.set_dict(opt_dict)
        resumed = [_step(model, opt, i) for i in range(3, 6)]
    np.testing.assert_allclose(first + resumed, full, rtol=0, atol=1e-6)
    assert sorted(p.name for p in (tmp_path / "checkpoint").iterdir()) == [
        "mnist_epoch0.pdopt",
        "mnist_epoch0.pdparams",
        "mnist_epoch0.pdsave",
    ]
    assert isinstance(opt_dict["LR_Scheduler"], dict)
    assert set(params_dict) == {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"}
