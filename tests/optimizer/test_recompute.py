"""RecomputeOptimizer: forward segments recomputed in backward give the same numbers with a
lower peak memory (measured with tracemalloc, which sees numpy's allocations)."""

import tracemalloc

import numpy as np
from oar import fluid
from oar.optimizer._recompute_pass import SUFFIX

WIDTH, DEPTH, BATCH = 64, 12, 1024


def _build(recompute):
    rng = np.random.default_rng(5)
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        h = x = fluid.data("x", [None, WIDTH], "float32")
        ckpts = []
        for i in range(DEPTH):
            w = rng.uniform(-0.1, 0.1, (WIDTH, WIDTH)).astype("float32")
            h = fluid.layers.fc(
                h,
                WIDTH,
                param_attr=fluid.ParamAttr(initializer=fluid.initializer.NumpyArrayInitializer(w)),
            )
            h = fluid.layers.tanh(fluid.layers.scale(h, 1.5))
            if i % 4 == 3:
                ckpts.append(h)
        loss = fluid.layers.reduce_mean(fluid.layers.square(h))
        opt = fluid.optimizer.SGD(0.1)
        if recompute:
            opt = fluid.optimizer.RecomputeOptimizer(opt)
            opt._set_checkpoints(ckpts)
        opt.minimize(loss)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    return main, exe, scope, loss, x


def _peak_and_losses(recompute):
    main, exe, scope, loss, _ = _build(recompute)
    feed = {"x": np.random.default_rng(6).uniform(-1, 1, (BATCH, WIDTH)).astype("float32")}
    exe.run(main, feed=feed, fetch_list=[loss], scope=scope)  # warm the plan
    tracemalloc.start()
    try:
        losses = [
            float(exe.run(main, feed=feed, fetch_list=[loss], scope=scope)[0][0]) for _ in range(2)
        ]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return main, peak, losses


def test_recompute_matches_and_lowers_the_peak():
    plain_prog, plain_peak, plain_losses = _peak_and_losses(False)
    re_prog, re_peak, re_losses = _peak_and_losses(True)
    np.testing.assert_allclose(re_losses, plain_losses, rtol=1e-5)
    clones = [
        op
        for op in re_prog.global_block().ops
        if any(n.endswith(SUFFIX) for n in op.output_arg_names)
    ]
    assert clones, "no forward op was recomputed"
    # without recompute the 12 tanh outputs (512 KiB each, read by tanh_grad / mul_grad) live
    # until backward; with it the 3 checkpoints and the segment being differentiated
    assert re_peak < 0.8 * plain_peak, (re_peak, plain_peak)
