"""DGCMomentumOptimizer across data-parallel places: each place sends the top-k of its
momentum-corrected gradient (c_allgather of indices and values), all apply the sum;
checked against a hand-computed numpy reference."""

from __future__ import annotations

import numpy as np
import pytest
from oar import fluid

pytest.importorskip("oar_dist")

LR, MU = 0.1, 0.9
W0 = np.random.RandomState(3).uniform(-1, 1, (6, 4)).astype("float32")


def _model(num_trainers, begin):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data("x", [None, 6], "float32")
        y = fluid.data("y", [None, 4], "float32")
        pred = fluid.layers.fc(
            x,
            4,
            param_attr=fluid.ParamAttr(
                "w", initializer=fluid.initializer.NumpyArrayInitializer(W0)
            ),
            bias_attr=False,
        )
        loss = fluid.layers.mean(fluid.layers.square(pred - y))
        fluid.optimizer.DGCMomentumOptimizer(
            LR, MU, rampup_begin_step=begin, sparsity=[0.75], num_trainers=num_trainers
        ).minimize(loss)
    return main, startup, loss


def _grad(x, y, w):
    """d mean((xw - y)^2) / dw."""
    return 2 * x.T @ (x @ w - y) / y.size


def _reference(batches, begin, ranks=2):
    """Places start from the same u; before the ramp-up the mean gradient drives momentum,
    afterwards each place sends the top 25% of |v| and the sum of what was sent is applied."""
    w = W0.astype("float64")
    u = [np.zeros_like(w) for _ in range(ranks)]
    v = [np.zeros_like(w) for _ in range(ranks)]
    k = w.size // 4
    for step, (x, y) in enumerate(batches):
        parts = np.split(x, ranks), np.split(y, ranks)
        g = [_grad(a, b, w) / ranks for a, b in zip(*parts)]  # the loss gradient is 1/ranks
        if step < begin:
            for r in range(ranks):
                u[r] = MU * u[r] + sum(g)
            w = w - LR * u[0]
            continue
        total = np.zeros_like(w)
        for r in range(ranks):
            u[r] = MU * u[r] + g[r]
            v[r] = v[r] + u[r]
            top = np.argsort(-np.abs(v[r]).ravel(), kind="stable")[:k]
            sent = np.zeros(w.size)
            sent[top] = v[r].ravel()[top]
            total += sent.reshape(w.shape)
            v[r].ravel()[top] = 0
            u[r].ravel()[top] = 0
        w = w - LR * total
    return w


def test_dgc_exchanges_top_k_between_places_as_the_reference():
    rng = np.random.RandomState(0)
    batches = [
        (rng.rand(8, 6).astype("float32"), rng.rand(8, 4).astype("float32")) for _ in range(4)
    ]
    main, startup, loss = _model(2, begin=1)
    types = [op.type for op in main.global_block().ops]
    assert types.count("c_allgather") == 2 and "dgc" in types and "dgc_momentum" not in types
    scope = fluid.Scope()
    with fluid.scope_guard(scope):
        exe = fluid.Executor(fluid.CPUPlace())
        exe.run(startup)
        compiled = fluid.CompiledProgram(main).with_data_parallel(
            loss_name=loss.name, places=fluid.cpu_places(2)
        )
        for x, y in batches:
            exe.run(compiled, feed={"x": x, "y": y}, fetch_list=[loss])
        dp_types = [op.type for op in compiled._runner._program.global_block().ops]
        assert "c_allgather" in dp_types  # only the sparse pieces travel
        assert "c_allreduce_sum" not in dp_types and "c_fused_allreduce_sum" not in dp_types
        got = [np.array(s.find_var("w").get_tensor()) for s in compiled._runner._scopes]
    want = _reference(batches, begin=1)
    for w in got:
        np.testing.assert_allclose(w, want, rtol=1e-5, atol=1e-6)
    # the sparse phase really changed the answer: dense momentum would differ
    assert not np.allclose(want, _reference(batches, begin=10), atol=1e-4)


def test_num_trainers_is_checked():
    with pytest.raises(Exception, match="num_trainers"):
        fluid.optimizer.DGCMomentumOptimizer(0.1, 0.9, 0, num_trainers=0)
