"""The fusion hook's repeated runs (independent ops of one type, such as one optimizer
update per parameter) and chains whose intermediates stay real arrays."""

from __future__ import annotations

import numpy as np
import pytest
from oar import fluid
from oar.api import registries, shape_stand_in
from oar.executor.plan import Plan
from oar.fusion import ENV_DISABLE
from oar.testing import scoped_registry

seen: list = []


def _make_sgd_run(ops, block):
    def sgd_run(inputs, attrs):
        seen.append(sorted(inputs))
        out = {}
        for k in range(len(ops)):
            p, g, lr = (inputs[f"{k}.{s}"] for s in ("Param", "Grad", "LearningRate"))
            p -= lr.reshape(-1)[0] * g
            out[f"{k}.ParamOut"] = p
        return out

    return sgd_run


def _make_scale_run(ops, block):
    def scale_run(inputs, attrs):
        seen.append(len(ops))
        return {
            f"{k}.Out": inputs[f"{k}.X"] * np.float32(attrs[str(k)]["scale"])
            for k in range(len(ops))
        }

    return scale_run


def _make_bias_relu_real(ops, block):
    def bias_relu(inputs, attrs):
        seen.append("bias_relu")
        t = inputs["0.X"] + inputs["0.Y"]
        return {"0.Out": t, "1.Out": np.maximum(t, 0)}

    return bias_relu


def _make_bias_relu_stand_in(ops, block):
    def bias_relu(inputs, attrs):
        t = inputs["0.X"] + inputs["0.Y"]
        return {"0.Out": shape_stand_in(t), "1.Out": np.maximum(t, 0)}

    return bias_relu


@pytest.fixture
def fusions():
    with scoped_registry() as reg:
        reg.fusions.current_plugin = "test-fusion-runs"
        seen.clear()
        yield reg.fusions


def _fused(plan):
    return [s.op.type for s in plan.steps if s.op.type.startswith("fused[test_")]


def _sgd_program():
    main, start = fluid.Program(), fluid.Program()
    main.random_seed = start.random_seed = 7
    with fluid.program_guard(main, start):
        x = fluid.data("x", [None, 6], "float32")
        h = fluid.layers.fc(x, 8, act="relu")
        loss = fluid.layers.mean(fluid.layers.fc(h, 1))
        fluid.optimizer.SGD(0.1).minimize(loss)
    return main, start, loss


def _train(main, start, loss, steps=3):
    exe, scope = fluid.Executor(fluid.CPUPlace()), fluid.Scope()
    exe.run(start, scope=scope)
    feed = {"x": np.random.default_rng(3).standard_normal((5, 6)).astype("float32")}
    return [exe.run(main, feed=feed, fetch_list=[loss], scope=scope)[0] for _ in range(steps)]


def test_a_run_of_updates_is_one_call_with_every_in_place_input(fusions, monkeypatch):
    fusions.register_fusion(
        "test_sgd_run", ("sgd",), "cpu", _make_sgd_run, 1000, repeated=True, selected_rows=True
    )
    main, start, loss = _sgd_program()
    plan = Plan(main, ("x",), (loss.name,), registries().devices.get("cpu"))
    assert _fused(plan) == ["fused[test_sgd_run]"]
    assert sum(op.type == "sgd" for op in main.global_block().ops) == 4
    fused = _train(main, start, loss)
    # a parameter updated in place is still an input of the fused call
    assert seen[0] == sorted(
        f"{k}.{s}" for k in range(4) for s in ("Grad", "LearningRate", "Param")
    )
    monkeypatch.setenv(ENV_DISABLE, "1")
    unfused = _train(main.clone(), start, loss)
    np.testing.assert_allclose(np.ravel(fused), np.ravel(unfused), rtol=1e-6)


def test_kernels_taking_selected_rows_fuse_only_when_the_fusion_says_so(fusions):
    assert registries().kernels.lookup("sgd", "cpu", "float32").selected_rows
    fusions.register_fusion("test_sgd_run", ("sgd",), "cpu", _make_sgd_run, 1000, repeated=True)
    main, _start, loss = _sgd_program()
    assert _fused(Plan(main, ("x",), (loss.name,), registries().devices.get("cpu"))) == []


def test_a_run_stops_at_an_op_that_depends_on_the_run(fusions):
    fusions.register_fusion(
        "test_scale_run", ("scale",), "cpu", _make_scale_run, 1000, repeated=True
    )
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        x = fluid.data("x", [None, 3], "float32")
        a = fluid.layers.scale(x, 2.0)
        b = fluid.layers.scale(x, 3.0)  # independent of a: a run of two
        c = fluid.layers.scale(b, 5.0)  # reads b: starts a new run
        d = fluid.layers.scale(x, 7.0)  # independent of c: a second run of two
        e = fluid.layers.scale(d, 11.0)  # reads d: alone, not fused
    fetch = [a, b, c, d, e]
    plan = Plan(main, ("x",), tuple(v.name for v in fetch), registries().devices.get("cpu"))
    assert [s.op.type for s in plan.steps] == [
        "fused[test_scale_run]",
        "fused[test_scale_run]",
        "scale",
    ]
    exe = fluid.Executor(fluid.CPUPlace())
    xv = np.arange(6, dtype="float32").reshape(2, 3)
    got = exe.run(main, feed={"x": xv}, fetch_list=fetch)
    assert seen == [2, 2]
    for v, want in zip(got, [2 * xv, 3 * xv, 15 * xv, 7 * xv, 77 * xv]):
        np.testing.assert_allclose(v, want, rtol=1e-6)


def _shared_sum_program():
    main, start = fluid.Program(), fluid.Program()
    main.random_seed = start.random_seed = 9
    with fluid.program_guard(main, start):
        x = fluid.data("x", [None, 6], "float32")
        pre = fluid.layers.fc(x, 8)  # mul + elementwise_add
        loss = fluid.layers.mean(fluid.layers.relu(pre)) + fluid.layers.mean(pre)
    return main, start, loss


def test_real_intermediates_let_a_chain_fuse_where_others_read_them(fusions):
    fusions.register_fusion(
        "test_stand_in", ("elementwise_add", "relu"), "cpu", _make_bias_relu_stand_in, 1000
    )
    main, start, loss = _shared_sum_program()
    cpu = registries().devices.get("cpu")
    assert _fused(Plan(main, ("x",), (loss.name,), cpu)) == []  # the sum feeds mean too
    fusions.register_fusion(
        "test_real",
        ("elementwise_add", "relu"),
        "cpu",
        _make_bias_relu_real,
        1000,
        keeps_intermediates=True,
    )
    assert _fused(Plan(main, ("x",), (loss.name,), cpu)) == ["fused[test_real]"]
    exe, scope = fluid.Executor(fluid.CPUPlace()), fluid.Scope()
    exe.run(start, scope=scope)
    xv = np.random.default_rng(4).standard_normal((5, 6)).astype("float32")
    got = exe.run(main, feed={"x": xv}, fetch_list=[loss], scope=scope)[0]
    assert seen == ["bias_relu"]
    w, b = (np.asarray(scope.find_var(n).get_tensor()) for n in ("fc_0.w_0", "fc_0.b_0"))
    pre = xv @ w + b
    np.testing.assert_allclose(got, [np.maximum(pre, 0).mean() + pre.mean()], rtol=1e-5)


def test_a_repeated_fusion_names_one_op_type(fusions):
    with pytest.raises(ValueError, match="one op type"):
        fusions.register_fusion("bad", ("sgd", "adam"), "cpu", _make_sgd_run, repeated=True)
