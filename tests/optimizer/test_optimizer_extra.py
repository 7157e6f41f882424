"""LookaheadOptimizer, extend_with_decoupled_weight_decay, DpsgdOptimizer and ErrorClipByValue
against Fluid 1.8.5 (golden data: 7 steps of a two-layer net)."""

import json
from pathlib import Path

import numpy as np
import pytest
from oar import fluid
from oar.errors import OarError

G = json.loads((Path(__file__).parent / "data" / "fluid18_optimizer_extra.json").read_text())
D = {k: np.array(v, "float32") for k, v in G["data"].items()}


def run(make_opt, error_clip=False):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data("x", [None, 4], "float32")
        y = fluid.data("y", [None, 1], "float32")
        init = fluid.initializer.NumpyArrayInitializer
        h = fluid.layers.fc(
            x,
            5,
            act="tanh",
            param_attr=fluid.ParamAttr("w1", initializer=init(D["w1"])),
            bias_attr=False,
        )
        if error_clip:
            h.error_clip = fluid.clip.ErrorClipByValue(max=0.02, min=-0.01)
        p = fluid.layers.fc(
            h, 1, param_attr=fluid.ParamAttr("w2", initializer=init(D["w2"])), bias_attr=False
        )
        loss = fluid.layers.reduce_mean(fluid.layers.square(p - y))
        make_opt().minimize(loss)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    feed = {"x": D["x"], "y": D["y"]}
    losses = [
        float(exe.run(main, feed=feed, fetch_list=[loss], scope=scope)[0][0]) for _ in range(7)
    ]
    return main, losses, {n: np.array(scope.find_var(n).get_tensor()) for n in ("w1", "w2")}


def _check(key, got):
    _, losses, params = got
    np.testing.assert_allclose(losses, G[key]["losses"], rtol=2e-5, atol=1e-6)
    for n in ("w1", "w2"):
        np.testing.assert_allclose(params[n], G[key][n], rtol=2e-5, atol=1e-6)


def test_lookahead_matches_fluid18():
    _check(
        "lookahead",
        run(lambda: fluid.optimizer.LookaheadOptimizer(fluid.optimizer.SGD(0.5), alpha=0.3, k=3)),
    )


def test_decoupled_weight_decay_matches_fluid18():
    AdamW = fluid.contrib.extend_with_decoupled_weight_decay(fluid.optimizer.Adam)
    _check("adamw", run(lambda: AdamW(weight_decay=0.1, learning_rate=0.05)))
    _check(
        "adamw_filtered",
        run(
            lambda: AdamW(
                weight_decay=0.2, apply_decay_param_fun=lambda n: n == "w1", learning_rate=0.05
            )
        ),
    )


def test_dpsgd_matches_fluid18_without_noise():
    _check(
        "dpsgd",
        run(
            lambda: fluid.optimizer.DpsgdOptimizer(
                learning_rate=0.3, clip=0.5, batch_size=8.0, sigma=0.0
            )
        ),
    )


def test_error_clip_matches_fluid18():
    main, *_ = got = run(lambda: fluid.optimizer.SGD(0.5), error_clip=True)
    assert "clip" in [op.type for op in main.global_block().ops]
    _check("error_clip", got)
    # plain append_backward leaves error_clip alone unless given the callback (as Fluid)
    for callbacks, want in ((None, False), ([fluid.clip.error_clip_callback], True)):
        prog = fluid.Program()
        with fluid.program_guard(prog, fluid.Program()):
            x = fluid.data("x", [None, 4], "float32")
            h = fluid.layers.fc(x, 2)
            h.error_clip = fluid.clip.ErrorClipByValue(0.1)
            fluid.backward.append_backward(fluid.layers.reduce_mean(h), callbacks=callbacks)
        assert ("clip" in [op.type for op in prog.global_block().ops]) == want


def test_recompute_gives_the_wrapped_optimizers_numbers():
    def plain():
        return fluid.optimizer.Adam(0.05)

    class Recompute:
        def minimize(self, loss):
            opt = fluid.optimizer.RecomputeOptimizer(fluid.optimizer.Adam(0.05))
            h = [op for op in loss.block.ops if op.type == "tanh"][0].output("Out")[0]
            opt._set_checkpoints([loss.block.var(h)])
            return opt.minimize(loss)

    _, want, pw = run(plain)
    _, got, pg = run(lambda: Recompute())
    np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_allclose(pg["w1"], pw["w1"], rtol=1e-6)


def test_pipeline_without_cuts_runs_one_stage_with_the_wrapped_numbers():
    _, want, _ = run(lambda: fluid.optimizer.Adam(0.05))
    _, got, _ = run(
        lambda: fluid.optimizer.PipelineOptimizer(fluid.optimizer.Adam(0.05), queue_size=4)
    )
    np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize(
    "build, match",
    [
        (lambda: fluid.optimizer.LookaheadOptimizer(fluid.optimizer.SGD(0.1), alpha=1.5), "alpha"),
        (lambda: fluid.optimizer.LookaheadOptimizer(fluid.optimizer.SGD(0.1), k=0), "k must"),
        (lambda: fluid.optimizer.LookaheadOptimizer("sgd"), "inner_optimizer"),
        (lambda: fluid.contrib.extend_with_decoupled_weight_decay(object), "optimizer class"),
        (
            lambda: fluid.contrib.extend_with_decoupled_weight_decay(fluid.optimizer.SGD)(
                -1.0, learning_rate=0.1
            ),
            ">= 0",
        ),
        (lambda: fluid.optimizer.DpsgdOptimizer(clip=0), "clip"),
        (lambda: fluid.optimizer.RecomputeOptimizer("adam"), "optimizer"),
        (
            lambda: fluid.optimizer.PipelineOptimizer(fluid.optimizer.SGD(0.1), [[], []], [0]),
            "one entry per section",
        ),
        (
            lambda: fluid.optimizer.PipelineOptimizer(fluid.optimizer.SGD(0.1), queue_size=0),
            "queue_size",
        ),
    ],
)
def test_bad_arguments_are_refused(build, match):
    with pytest.raises(OarError, match=match):
        build()
    with pytest.raises(ValueError, match="min"):
        fluid.clip.ErrorClipByValue(max=0.1, min=0.2)
