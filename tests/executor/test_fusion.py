"""The fusion hook: chains of ops in a static plan run as one kernel a plugin offers."""

from __future__ import annotations

import numpy as np
import pytest
from oar import fluid
from oar.api import registries, shape_stand_in
from oar.errors import RegistryError
from oar.executor.checked_plan import CheckedPlan
from oar.executor.plan import Plan
from oar.fusion import ENV_DISABLE
from oar.testing import scoped_registry

calls: list = []


def _make(ops, block):
    if ops[0].attrs.get("axis") not in (-1, 1):
        return None

    def bias_relu(inputs, attrs):
        calls.append(sorted(inputs))
        t = inputs["0.X"] + inputs["0.Y"]
        return {"0.Out": shape_stand_in(t), "1.Out": np.maximum(t, 0)}

    return bias_relu


def _program(seed=5, act="relu"):
    main, start = fluid.Program(), fluid.Program()
    main.random_seed = start.random_seed = seed
    with fluid.program_guard(main, start):
        x = fluid.data("x", [None, 6], "float32")
        h = fluid.layers.fc(x, 8, act=act)
        loss = fluid.layers.mean(fluid.layers.fc(h, 1))
        fluid.optimizer.SGD(0.1).minimize(loss)
    return main, start, x, h, loss


def _train(main, start, loss, fetch_extra=(), steps=3):
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(start, scope=scope)
    feed = {"x": np.random.default_rng(1).standard_normal((4, 6)).astype("float32")}
    return [
        [
            np.asarray(v)
            for v in exe.run(main, feed=feed, fetch_list=[loss, *fetch_extra], scope=scope)
        ]
        for _ in range(steps)
    ]


def _fused_types(plan):
    # this file's fusions only (installed plugins' own fusions may fuse the backward too)
    return [s.op.type for s in plan.steps if s.op.type.startswith("fused[test_")]


def _plan(main, loss, cls=Plan):
    return cls(main, ("x",), (loss.name,), registries().devices.get("cpu"))


@pytest.fixture
def fusion():
    with scoped_registry() as reg:
        reg.fusions.current_plugin = "test-fusion"
        reg.fusions.register_fusion(
            "test_bias_relu", ("elementwise_add", "relu"), "cpu", _make, priority=1000
        )
        reg.fusions.current_plugin = "?"
        calls.clear()
        yield reg


def test_chain_runs_as_one_call_with_the_same_results(fusion, monkeypatch):
    main, start, _x, _h, loss = _program()
    assert _fused_types(_plan(main, loss)) == ["fused[test_bias_relu]"]
    fused = _train(main, start, loss)
    assert calls and calls[0] == ["0.X", "0.Y"]  # the chain's outside inputs only
    monkeypatch.setenv(ENV_DISABLE, "1")
    assert _fused_types(_plan(main, loss)) == []
    unfused = _train(main.clone(), start, loss)  # a new program object: a new plan
    for a, b in zip(fused, unfused):
        np.testing.assert_allclose(a[0], b[0], rtol=1e-6)


def test_a_fetched_intermediate_or_output_blocks_nothing_it_should_not(fusion):
    main, start, _x, h, loss = _program()
    pre_act = main.global_block().ops[[op.type for op in main.global_block().ops].index("relu")]
    tmp = pre_act.input("X")[0]
    plan = Plan(main, ("x",), (loss.name, tmp), registries().devices.get("cpu"))
    assert _fused_types(plan) == []  # the sum is fetched: it must exist
    plan = Plan(main, ("x",), (loss.name, h.name), registries().devices.get("cpu"))
    assert _fused_types(plan) == ["fused[test_bias_relu]"]  # the activation's output may be
    out = _train(main, start, loss, fetch_extra=[h])
    assert (out[0][1] >= 0).all()


def test_checked_plans_and_other_chains_do_not_fuse(fusion):
    main, _start, _x, _h, loss = _program()
    assert _fused_types(_plan(main, loss, CheckedPlan)) == []  # NaN checks name single ops
    main2, _s, _x2, _h2, loss2 = _program(act="sigmoid")
    assert _fused_types(_plan(main2, loss2)) == []  # no (elementwise_add, relu) chain


def test_registry_refuses_a_duplicate_and_rolls_back(fusion):
    with pytest.raises(RegistryError, match="registered twice"):
        fusion.fusions.register_fusion("test_bias_relu", ("elementwise_add", "relu"), "cpu", _make)
    with pytest.raises(ValueError, match="two ops or more"):
        fusion.fusions.register_fusion("one", ("relu",), "cpu", _make)
    fusion.fusions.remove_owned_by("test-fusion")
    assert "test_bias_relu" not in fusion.fusions.names()


def test_lod_passes_through_a_fused_chain(fusion):
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        w = fluid.data("w", [None, 4], "float32", lod_level=1)
        h = fluid.layers.fc(w, 3, act="relu")
        pooled = fluid.layers.sequence_pool(h, "sum")
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(start, scope=scope)
    t = fluid.create_lod_tensor(np.ones((5, 4), "float32"), [[2, 3]], fluid.CPUPlace())
    hv, pv = exe.run(main, feed={"w": t}, fetch_list=[h, pooled], scope=scope, return_numpy=False)
    assert calls, "the chain was not fused"
    assert hv.recursive_sequence_lengths() == [[2, 3]]
    np.testing.assert_allclose(np.asarray(pv), np.asarray(hv)[[0, 2]] * [[2], [3]], rtol=1e-6)


def test_an_intermediate_read_by_another_op_is_not_fused(fusion):
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        x = fluid.data("x", [None, 6], "float32")
        pre = fluid.layers.fc(x, 8)  # mul + elementwise_add
        loss = fluid.layers.mean(fluid.layers.relu(pre)) + fluid.layers.mean(pre)
    plan = Plan(main, ("x",), (loss.name,), registries().devices.get("cpu"))
    assert _fused_types(plan) == []  # the sum feeds relu and mean


def test_oar_plugins_lists_fusions(fusion):
    from oar.cli import plugins_report

    got = [f for f in plugins_report()["fusions"] if f["name"] == "test_bias_relu"]
    assert got == [
        {
            "name": "test_bias_relu",
            "ops": ["elementwise_add", "relu"],
            "device": "cpu",
            "plugin": "test-fusion",
        }
    ]


def _make_grad(ops, block):
    def relu_bias_grad(inputs, attrs):
        x = inputs["1.X"]
        calls.append((x.strides, x.shape))
        dx = inputs["0.Out@GRAD"] * (inputs["0.Out"] > 0)
        return {"0.X@GRAD": shape_stand_in(dx), "1.X@GRAD": dx, "1.Y@GRAD": dx.sum(0)}

    return relu_bias_grad


def test_a_shape_only_slot_of_a_chain_op_stays_shape_only_when_fused(monkeypatch):
    """elementwise_add_grad reads X only for its shape: fused, the pre-bias sum is still
    swapped for a stand-in after the forward, not kept alive until the backward."""
    with scoped_registry() as reg:
        chain = ("relu_grad", "elementwise_add_grad")
        reg.fusions.register_fusion("test_relu_bias_grad", chain, "cpu", _make_grad, 1000)
        calls.clear()
        main, start = fluid.Program(), fluid.Program()
        with fluid.program_guard(main, start):
            x = fluid.data("x", [None, 128], "float32")
            h = fluid.layers.fc(x, 256, act="relu")  # [32, 256] float32: worth a stand-in
            loss = fluid.layers.mean(h)
            fluid.optimizer.SGD(0.1).minimize(loss, start)
        plan = _plan(main, loss)
        grad = next(s for s in plan.steps if s.op.type == "fused[test_relu_bias_grad]")
        assert set(grad.call.entry.no_need_buffer) == {"1.X", "1.Y"}
        pre_bias = dict(grad.call.singles)["1.X"]
        assert any(pre_bias in s.shrink for s in plan.steps)
        exe = fluid.Executor(fluid.CPUPlace())
        scope = fluid.Scope()
        exe.run(start, scope=scope)
        xs = np.random.default_rng(2).standard_normal((32, 128)).astype("float32")
        exe.run(main, feed={"x": xs}, fetch_list=[loss], scope=scope)
        assert calls == [((0, 0), (32, 256))]  # a stand-in of the right shape


def _make_grad_inplace(ops, block):
    def relu_bias_grad(inputs, attrs, donated=frozenset()):
        d = inputs["0.Out@GRAD"]
        calls.append((donated, d.shape))
        dx = np.multiply(d, inputs["0.Out"] > 0, out=d if "0.Out@GRAD" in donated else None)
        return {"0.X@GRAD": shape_stand_in(dx), "1.X@GRAD": dx, "1.Y@GRAD": dx.sum(0)}

    return relu_bias_grad


def _relu_fc_step(main, start, loss):
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(start, scope=scope)
    xs = np.random.default_rng(2).standard_normal((32, 128)).astype("float32")
    return [exe.run(main, feed={"x": xs}, fetch_list=[loss], scope=scope)[0] for _ in range(2)]


@pytest.mark.parametrize("inplace", [True, False])
def test_an_inplace_fusion_may_overwrite_the_dying_input(inplace, monkeypatch):
    """Registered ``inplace=True``, a fused kernel is offered the dying incoming gradient (the
    plan checks at run time that nothing else holds it); registered without, it is called
    without ``donated`` and must leave its inputs alone."""
    with scoped_registry() as reg:
        chain = ("relu_grad", "elementwise_add_grad")
        reg.fusions.register_fusion(
            "test_relu_bias_grad", chain, "cpu", _make_grad_inplace, 1000, inplace=inplace
        )
        calls.clear()
        main, start = fluid.Program(), fluid.Program()
        main.random_seed = start.random_seed = 3
        with fluid.program_guard(main, start):
            x = fluid.data("x", [None, 128], "float32")
            h = fluid.layers.fc(x, 256, act="relu")  # [32, 256] float32: worth donating
            h = fluid.layers.scale(h, 2.0)  # the gradient reaching relu: an array of its own
            loss = fluid.layers.mean(h)
            fluid.optimizer.SGD(0.1).minimize(loss, start)
        plan = _plan(main, loss)
        grad = next(s for s in plan.steps if s.op.type == "fused[test_relu_bias_grad]")
        assert grad.call.entry.inplace is inplace
        fused = _relu_fc_step(main, start, loss)
        assert len(calls) == 2
        for donated, _ in calls:  # the dying gradient and activation, or nothing
            assert donated == ({"0.Out@GRAD", "0.Out"} if inplace else frozenset())
        monkeypatch.setenv(ENV_DISABLE, "1")
        unfused = _relu_fc_step(main.clone(), start, loss)
        np.testing.assert_allclose(np.ravel(fused), np.ravel(unfused), rtol=1e-6)
