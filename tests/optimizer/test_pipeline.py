"""PipelineOptimizer: stages cut by cut_list or device_guard, one thread per stage,
micro-batches whose gradients are averaged; numbers equal the unpipelined run's."""

import threading

import numpy as np
import pytest
from oar import fluid
from oar.errors import OarError

rng = np.random.default_rng(7)
X = rng.normal(size=(8, 4)).astype("float32")
Y = rng.normal(size=(8, 1)).astype("float32")


def _record_thread(seen, tag):
    def fn(a):
        seen.add((tag, threading.current_thread().name))
        return np.asarray(a)

    return fn


def _identity(v, seen, tag):
    """A py_func passing ``v`` through and recording which thread ran it."""
    block = fluid.default_main_program().current_block()
    out = block.create_var(name=f"{tag}_seen", shape=v.shape, dtype=v.dtype)
    fluid.layers.py_func(_record_thread(seen, tag), v, out, backward_func=lambda x, y, dy: dy)
    return out


def build(make_opt, split="cut", seen=None):
    main, startup = fluid.Program(), fluid.Program()
    init = fluid.initializer.Uniform(-0.5, 0.5, seed=3)
    with fluid.program_guard(main, startup):
        x = fluid.data("x", [None, 4], "float32")
        lab = fluid.data("y", [None, 1], "float32")
        with fluid.device_guard("cpu" if split == "device" else None):
            h = fluid.layers.fc(
                x, 8, act="tanh", param_attr=fluid.ParamAttr("w0", initializer=init)
            )
            if seen is not None:
                h = _identity(h, seen, "first")
        with fluid.device_guard("gpu" if split == "device" else None):
            h2 = fluid.layers.fc(
                h, 6, act="relu", param_attr=fluid.ParamAttr("w1", initializer=init)
            )
            if seen is not None:
                h2 = _identity(h2, seen, "second")
            out = fluid.layers.fc(h2, 1, param_attr=fluid.ParamAttr("w2", initializer=init))
            loss = fluid.layers.reduce_mean(fluid.layers.square(out - lab))
        make_opt(h, loss).minimize(loss)
    return main, startup, loss, out


def train(make_opt, split="cut", steps=4, seen=None):
    main, startup, loss, out = build(make_opt, split, seen)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    losses, outs = [], []
    for _ in range(steps):
        lv, ov = exe.run(main, feed={"x": X, "y": Y}, fetch_list=[loss, out], scope=scope)
        losses.append(float(lv[0]))
        outs.append(ov)
    params = {n: np.array(scope.find_var(n).get_tensor()) for n in ("w0", "w1", "w2")}
    return main, losses, outs, params


def _plain(h, loss):
    return fluid.optimizer.Momentum(0.1, 0.9)


@pytest.mark.parametrize("micro", [1, 4])
def test_two_stages_by_cut_list_match_the_unpipelined_run(micro):
    _, want, want_out, want_p = train(_plain)

    def pipe(h, loss):
        return fluid.optimizer.PipelineOptimizer(
            _plain(h, loss), cut_list=[[h], [loss]], num_microbatches=micro
        )

    main, got, got_out, got_p = train(pipe)
    assert main._oar_compiled.sections().num_stages == 2
    np.testing.assert_allclose(got, want, rtol=1e-5)
    np.testing.assert_allclose(got_out[-1], want_out[-1], rtol=1e-5, atol=1e-6)
    for name in want_p:
        np.testing.assert_allclose(got_p[name], want_p[name], rtol=1e-5, atol=1e-6)


def test_device_guard_stages_run_in_their_own_threads():
    seen_plain: set = set()
    _, want, _, _ = train(lambda h, loss: fluid.optimizer.Adam(0.05), "device", 3, seen_plain)
    seen: set = set()
    main, got, _, _ = train(
        lambda h, loss: fluid.optimizer.PipelineOptimizer(
            fluid.optimizer.Adam(0.05), num_microbatches=2
        ),
        "device",
        3,
        seen,
    )
    np.testing.assert_allclose(got, want, rtol=1e-5)
    secs = main._oar_compiled.sections()
    assert secs.num_stages == 2
    first = [op.type for op in secs.forward[0].global_block().ops]
    assert "tanh" in first and "relu" not in first
    assert {op.type for op in secs.update.global_block().ops} == {"adam"}
    # each stage's forward ran on its own thread, never the caller's
    assert seen == {("first", "oar-pipeline-stage-0"), ("second", "oar-pipeline-stage-1")}


def test_sections_split_the_backward_pass_in_reverse_order():
    main, _, _, _ = build(
        lambda h, loss: fluid.optimizer.PipelineOptimizer(
            fluid.optimizer.SGD(0.1), cut_list=[[h], [loss]]
        )
    )
    secs = main._oar_compiled.sections()
    assert [op.type for op in secs.backward[0].global_block().ops] == [
        "tanh_grad",
        "elementwise_add_grad",
        "mul_grad",
    ]
    # the update reads every parameter's gradient, averaged over the micro-batches
    assert {"w0@GRAD", "w1@GRAD", "w2@GRAD"} <= set(secs.grads)
    assert all(g.endswith("@GRAD") for g in secs.grads) and len(secs.grads) == 6


def _sgd_two_stages():
    """A 2-stage, 2-micro-batch SGD pipeline, initialised: (main, loss, executor, scope)."""

    def pipe(h, loss):
        return fluid.optimizer.PipelineOptimizer(
            fluid.optimizer.SGD(0.1), cut_list=[[h]], num_microbatches=2
        )

    main, startup, loss, _ = build(pipe)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    return main, loss, exe, scope


def test_a_failing_stage_raises_in_the_caller():
    main, loss, exe, scope = _sgd_two_stages()
    with pytest.raises(OarError, match="equal micro-batches"):
        exe.run(main, feed={"x": X[:3], "y": Y[:3]}, fetch_list=[loss], scope=scope)
    with pytest.raises(OarError):  # stage 1 lacks the label: the worker's error comes back
        exe.run(main, feed={"x": X}, fetch_list=[loss], scope=scope)
    with pytest.raises(OarError, match="num_microbatches"):
        fluid.optimizer.PipelineOptimizer(fluid.optimizer.SGD(0.1), num_microbatches=0)


def test_fetching_a_parameter_gives_its_updated_value():
    main, loss, exe, scope = _sgd_two_stages()
    before = np.array(scope.find_var("w0").get_tensor())
    _, w0 = exe.run(main, feed={"x": X, "y": Y}, fetch_list=[loss, "w0"], scope=scope)
    np.testing.assert_array_equal(w0, np.array(scope.find_var("w0").get_tensor()))
    assert not np.allclose(w0, before)


def test_train_from_dataset_runs_the_pipeline(tmp_path):
    """Fluid 1.8's way to train a pipelined program: Executor.train_from_dataset."""
    rows = [(X[i], Y[i]) for i in range(8)]
    path = tmp_path / "part-0"
    path.write_text(
        "".join(
            "4 " + " ".join(map(repr, map(float, x))) + f" 1 {float(y[0])!r}\n" for x, y in rows
        )
    )

    def fit(make_opt):
        main, startup, loss, _ = build(make_opt)
        block = main.global_block()
        dataset = fluid.DatasetFactory().create_dataset("QueueDataset")
        dataset.set_use_var([block.var("x"), block.var("y")])
        dataset.set_batch_size(4)
        dataset.set_filelist([str(path)])
        exe = fluid.Executor(fluid.CPUPlace())
        scope = fluid.Scope()
        with fluid.scope_guard(scope):
            exe.run(startup)
            for _ in range(2):
                exe.train_from_dataset(main, dataset, thread=1, print_period=100)
        return np.array(scope.find_var("w1").get_tensor())

    want = fit(_plain)
    got = fit(
        lambda h, loss: fluid.optimizer.PipelineOptimizer(
            _plain(h, loss), cut_list=[[h]], num_microbatches=2
        )
    )
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
