"""Each inference pass, alone and all together, leaves every scenario model's outputs unchanged."""

from __future__ import annotations

import numpy as np
import pytest
from models import reference
from oar import fluid

core = fluid.core
SCENARIOS = ["fit_a_line", "mlp", "mnist_cnn"]
PASSES = [
    "simplify_with_basic_ops_pass",
    "dead_op_elimination_pass",
    "constant_folding_pass",
    "conv_bn_fuse_pass",
    "fc_fuse_pass",
    "conv_elementwise_add_act_fuse_pass",
]


def _predict(dirname, feed, passes):
    config = core.AnalysisConfig(dirname)
    config.switch_use_feed_fetch_ops(False)
    if passes is None:
        config.switch_ir_optim(False)
    else:
        config.pass_builder().set_passes(passes)
    pred = core.create_paddle_predictor(config)
    for n, arr in feed.items():
        pred.get_input_tensor(n).copy_from_cpu(arr)
    pred.zero_copy_run()
    out = pred.get_output_tensor(pred.get_output_names()[0]).copy_to_cpu()
    return out, pred


def test_default_passes_are_the_registered_ones_in_order():
    assert core.AnalysisConfig().pass_builder().all_passes() == PASSES


@pytest.mark.parametrize("pass_name", PASSES)
@pytest.mark.parametrize("name", SCENARIOS)
def test_one_pass_keeps_outputs(scenario_models, name, pass_name):
    dirname, feeds = scenario_models[name]
    feed = feeds(np.random.default_rng(7), 5)
    want, _ = _predict(dirname, feed, None)
    got, pred = _predict(dirname, feed, [pass_name])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert list(pred.pass_stats) == [pass_name]


@pytest.mark.parametrize("name", SCENARIOS)
def test_all_passes_keep_outputs_and_fuse(scenario_models, name):
    dirname, feeds = scenario_models[name]
    feed = feeds(np.random.default_rng(8), 5)
    (want,), prog = reference(dirname, feed)
    got, pred = _predict(dirname, feed, PASSES)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    types = [op.type for op in pred.program().global_block().ops]
    before = [op.type for op in prog.global_block().ops]
    assert len(types) < len(before)
    assert "fc" in types and "mul" not in types and "dropout" not in types
    if name == "mnist_cnn":
        assert types.count("conv2d_fusion") == 2 and "conv2d" not in types
        assert types.count("batch_norm") == 1  # the one after conv + relu cannot be folded
        assert pred.pass_stats["conv_bn_fuse_pass"] == 2


def test_passes_do_not_change_the_loaded_weights(scenario_models):
    dirname, feeds = scenario_models["mnist_cnn"]
    _, pred = _predict(dirname, feeds(np.random.default_rng(1), 1), PASSES)
    scope = pred.scope()
    folded = [n for n in scope.local_var_names() if "@folded" in n]
    assert folded  # new parameters for the folded weights
    for n in folded:
        orig = n.split("@folded")[0]
        assert scope.find_var(orig) is not None


def _program_with_constants(tmp_path):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        x = fluid.layers.data(name="x", shape=[3], dtype="float32")
        w = fluid.layers.create_parameter([3], "float32", name="w")
        two = fluid.layers.fill_constant([3], "float32", 2.0)
        w2 = fluid.layers.elementwise_mul(w, two)  # constant: folded
        w3 = fluid.layers.exp(w2)  # constant: folded
        y = fluid.layers.elementwise_add(x, w3)
        fluid.layers.relu(x)  # dead: not needed for y
    scope, exe = fluid.Scope(), fluid.Executor(fluid.CPUPlace())
    with fluid.scope_guard(scope):
        exe.run(startup)
        fluid.io.save_inference_model(str(tmp_path), ["x"], [y], exe, main, program_only=False)
    return str(tmp_path)


def test_constant_folding_computes_parameter_only_ops_once(tmp_path):
    dirname = _program_with_constants(tmp_path)
    feed = {"x": np.arange(6, dtype="float32").reshape(2, 3)}
    want, _ = _predict(dirname, feed, None)
    got, pred = _predict(dirname, feed, ["constant_folding_pass"])
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert [op.type for op in pred.program().global_block().ops] == ["elementwise_add"]
    assert pred.pass_stats["constant_folding_pass"] == 3


def test_dead_op_elimination_removes_ops_that_reach_no_output(scenario_models):
    dirname, feeds = scenario_models["fit_a_line"]
    config = core.AnalysisConfig(dirname)
    config.switch_ir_optim(False)
    pred = core.create_paddle_predictor(config)
    block = pred.program().global_block()
    n = len(block.ops)
    dead = block.create_var(name="dead_out", shape=[-1, 13], dtype="float32")
    block.append_op("relu", {"X": ["x"]}, {"Out": [dead]})
    from oar_deploy.passes import run_passes

    stats = run_passes(
        pred.program(), pred.scope(), ["x"], pred.get_output_names(), ["dead_op_elimination_pass"]
    )
    assert stats == {"dead_op_elimination_pass": 1} and len(block.ops) == n


def test_third_party_pass_through_the_hook(scenario_models):
    from oar.api import hookimpl, register_plugin
    from oar.testing import scoped_registry
    from oar_deploy.passes import InferencePass

    seen = []

    def count_ops(ctx):
        seen.append(len(ctx.block.ops))
        return 0

    class ThirdParty:
        @hookimpl
        def oar_register_inference_passes(self, registry):
            registry.register("count_ops_pass", InferencePass("count_ops_pass", count_ops, 999))

    dirname, feeds = scenario_models["mlp"]
    with scoped_registry():
        register_plugin(ThirdParty(), name="third-party-pass")
        config = core.AnalysisConfig(dirname)
        assert config.pass_builder().all_passes()[-1] == "count_ops_pass"
        core.create_paddle_predictor(config)
    assert seen == [4]  # ran after the built-in passes: fc, fc, fc (dropout folded), softmax
    with pytest.raises(ValueError, match="'nope_pass' is not registered"):
        _predict(dirname, feeds(np.random.default_rng(0), 1), ["nope_pass"])
