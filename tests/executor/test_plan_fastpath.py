"""The plan's generated per-step functions behave like its generic loop.

``Plan.run`` runs LoD-free programs through one generated function per op
(``oar.executor.stepgen``) and everything else through the generic loop; these
tests pin down that both give the same values, free the same temporaries,
report errors the same way, and that the executor's feed checks still catch
bad feeds after a plan is cached.
"""

from __future__ import annotations

import numpy as np
import pytest
from oar import fluid
from oar.errors import FeedError, OarError, OpRuntimeError
from oar.executor.plan import Plan
from oar.lod_tensor import SelectedRows
from oar.plugins import registries
from oar.registry import OpDef
from oar.testing import scoped_registry

# --- test-only ops --------------------------------------------------------------------------------


TEST_OPS = ("_perf_two_out", "_perf_split2", "_perf_raise", "_perf_concat", "_perf_probe")
PROBED: list = []  # the ``donated`` sets _perf_probe received


def _register_test_ops() -> None:
    reg = registries()
    reg.ops.register_op(OpDef("_perf_two_out", ["X"], ["A", "B?"]))
    reg.ops.register_op(OpDef("_perf_split2", ["X"], ["Out*"]))
    reg.ops.register_op(OpDef("_perf_raise", ["X"], ["Out"], {}))
    reg.ops.register_op(OpDef("_perf_concat", ["X*"], ["Out"]))
    reg.ops.register_op(OpDef("_perf_probe", ["X"], ["Out"]))

    def two_out(inputs, attrs, wanted):
        x = inputs["X"]
        return {"A": x + 1, "B": x * 2 if "B" in wanted else None}

    def split2(inputs, attrs):
        a, b = np.split(inputs["X"], 2, axis=0)
        return {"Out": [a, b]}

    def boom(inputs, attrs):
        if inputs["X"].sum() > 100:
            raise OarError("_perf_raise: the sum is too large")
        return {"Out": inputs["X"][:, 5]}  # IndexError for fewer than 6 columns

    def concat(inputs, attrs):
        return {"Out": np.concatenate(inputs["X"], axis=0)}

    reg.kernels.register_kernel("_perf_two_out", "cpu", None, two_out, wants_outputs=True)
    reg.kernels.register_kernel("_perf_split2", "cpu", None, split2)
    reg.kernels.register_kernel("_perf_raise", "cpu", None, boom)
    reg.kernels.register_kernel("_perf_concat", "cpu", None, concat)

    def probe(inputs, attrs, donated=frozenset()):
        PROBED.append(set(donated))
        return {"Out": inputs["X"] + 1}

    reg.kernels.register_kernel("_perf_probe", "cpu", None, probe, inplace=True)


@pytest.fixture
def test_ops():
    """Ops that exist only during one test (other tests check every registered op)."""
    with scoped_registry():
        _register_test_ops()
        yield


def _var(block, name, shape, dtype="float32"):
    return block.create_var(name=name, shape=shape, dtype=dtype)


def _generic(monkeypatch):
    """Force every plan built from now on down the generic loop."""
    orig = Plan.__init__

    def init(self, *a, **kw):
        orig(self, *a, **kw)
        self.has_lod_ops = True

    monkeypatch.setattr(Plan, "__init__", init)


# --- same results on both paths -------------------------------------------------------------------


def _train_losses(steps: int = 3) -> tuple:
    main, startup = fluid.Program(), fluid.Program()
    main.random_seed = startup.random_seed = 7
    with fluid.program_guard(main, startup):
        x = fluid.layers.data("x", [6], dtype="float32")
        label = fluid.layers.data("label", [1], dtype="int64")
        h = fluid.layers.fc(x, 8, act="relu")
        h = fluid.layers.fc([h, x], 4, act="softmax")
        loss = fluid.layers.mean(fluid.layers.cross_entropy(h, label))
        fluid.optimizer.Adam(0.01).minimize(loss, startup)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((5, 6)).astype("float32")
    ls = rng.integers(0, 4, (5, 1)).astype("int64")
    out = [
        exe.run(main, feed={"x": xs, "label": ls}, fetch_list=[loss, h], scope=scope)
        for _ in range(steps)
    ]
    params = {p.name: np.array(scope.find_var(p.name).get_tensor()) for p in main.all_parameters()}
    return out, params


def test_fast_and_generic_loops_train_identically(monkeypatch):
    fast_out, fast_params = _train_losses()
    with fluid.unique_name.guard():
        _generic(monkeypatch)
        gen_out, gen_params = _train_losses()
    for (fl, fh), (gl, gh) in zip(fast_out, gen_out):
        np.testing.assert_array_equal(fl, gl)
        np.testing.assert_array_equal(fh, gh)
    assert fast_params.keys() == gen_params.keys()
    for k in fast_params:
        np.testing.assert_array_equal(fast_params[k], gen_params[k])
    assert fast_out[0][0] != fast_out[-1][0]  # it did train


def _plan_for(exe, program, feed, fetch):
    exe.run(program, feed=feed, fetch_list=fetch)
    return next(p for _, p in exe._plans.values() if p.program is program)


def test_step_functions_free_temporaries_after_last_use():
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        x = fluid.layers.data("x", [3], dtype="float32")
        a = fluid.layers.relu(x)
        b = fluid.layers.scale(a, 2.0)
        c = fluid.layers.elementwise_add(a, b)
        d = fluid.layers.scale(c, 0.5)
    exe = fluid.Executor(fluid.CPUPlace())
    feed = {"x": np.array([[-1, 2, 3]], "float32")}
    plan = _plan_for(exe, main, feed, [d])
    env = dict(feed)
    alive = []
    for fn in plan.step_fns:
        fn(env)
        alive.append(set(env) - {"x"})
    # a lives until the add that reads it; b and c die at their only reader
    assert alive == [{a.name}, {a.name, b.name}, {c.name}, {d.name}]
    np.testing.assert_allclose(env[d.name], [[0, 3, 4.5]])


def test_wants_outputs_kernel_may_skip_unwanted_outputs(test_ops):
    main = fluid.Program()
    block = main.global_block()
    with fluid.program_guard(main, fluid.Program()):
        x = fluid.layers.data("x", [2], dtype="float32")
    _var(block, "a", [-1, 2])
    _var(block, "b", [-1, 2])
    block.append_op("_perf_two_out", {"X": [x]}, {"A": ["a"]}, infer=False)
    exe = fluid.Executor(fluid.CPUPlace())
    feed = {"x": np.ones((1, 2), "float32")}
    (a,) = exe.run(main, feed=feed, fetch_list=["a"])
    np.testing.assert_array_equal(a, [[2, 2]])
    block.append_op("_perf_two_out", {"X": ["a"]}, {"A": ["a2"], "B": ["b"]}, infer=False)
    _var(block, "a2", [-1, 2])
    a2, b = exe.run(main, feed=feed, fetch_list=["a2", "b"])
    np.testing.assert_array_equal(a2, [[3, 3]])
    np.testing.assert_array_equal(b, [[4, 4]])


def test_duplicable_inputs_and_outputs(test_ops):
    main = fluid.Program()
    block = main.global_block()
    with fluid.program_guard(main, fluid.Program()):
        x = fluid.layers.data("x", [4, 2], dtype="float32", append_batch_size=False)
    for n in ("p", "q", "r"):
        _var(block, n, [-1, 2])
    block.append_op("_perf_split2", {"X": [x]}, {"Out": ["p", "q"]}, infer=False)
    block.append_op("_perf_concat", {"X": ["q", "p"]}, {"Out": ["r"]}, infer=False)
    xs = np.arange(8, dtype="float32").reshape(4, 2)
    (r,) = fluid.Executor(fluid.CPUPlace()).run(main, feed={"x": xs}, fetch_list=["r"])
    np.testing.assert_array_equal(r, np.concatenate([xs[2:], xs[:2]]))


def test_selected_rows_input_is_densified_for_dense_kernels():
    main = fluid.Program()
    block = main.global_block()
    sr = block.create_var(name="sr", shape=[4, 2], dtype="float32", persistable=True)
    sr.type = "selected_rows"
    with fluid.program_guard(main, fluid.Program()):
        out = fluid.layers.scale(sr, 3.0)
    scope = fluid.Scope()
    scope.var("sr").value = SelectedRows([1, 3, 1], 4, np.ones((3, 2), "float32"))
    (got,) = fluid.Executor(fluid.CPUPlace()).run(main, fetch_list=[out], scope=scope)
    np.testing.assert_array_equal(got, [[0, 0], [6, 6], [0, 0], [3, 3]])


def test_lod_feed_goes_through_the_generic_loop_and_keeps_lod():
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        x = fluid.layers.data("x", [1], dtype="float32", lod_level=1)
        y = fluid.layers.scale(x, 2.0)
    t = fluid.create_lod_tensor(
        np.arange(5, dtype="float32").reshape(5, 1), [[2, 3]], fluid.CPUPlace()
    )
    exe = fluid.Executor(fluid.CPUPlace())
    (got,) = exe.run(main, feed={"x": t}, fetch_list=[y], return_numpy=False)
    assert got.recursive_sequence_lengths() == [[2, 3]]
    np.testing.assert_array_equal(np.array(got).ravel(), [0, 2, 4, 6, 8])
    # the same cached plan without LoD runs the fast path
    (plain,) = exe.run(main, feed={"x": np.ones((2, 1), "float32")}, fetch_list=[y])
    np.testing.assert_array_equal(plain, [[2], [2]])


# --- errors ----------------------------------------------------------------------------------------


def _raising_program():
    main = fluid.Program()
    block = main.global_block()
    with fluid.program_guard(main, fluid.Program()):
        x = fluid.layers.data("x", [3], dtype="float32")
        y = fluid.layers.relu(x)
    _var(block, "boom_out", [-1])
    block.append_op("_perf_raise", {"X": [y]}, {"Out": ["boom_out"]}, infer=False)  # line to report
    return main


@pytest.mark.parametrize("generic", [False, True])
def test_kernel_failure_names_op_inputs_and_user_line(test_ops, monkeypatch, generic):
    if generic:
        _generic(monkeypatch)
    main = _raising_program()
    exe = fluid.Executor(fluid.CPUPlace())
    with pytest.raises(OpRuntimeError) as info:
        exe.run(main, feed={"x": np.ones((2, 3), "float32")}, fetch_list=["boom_out"])
    msg = str(info.value)
    assert "op '_perf_raise' failed on cpu: IndexError" in msg
    assert "X=relu_0.tmp_0[2, 3]" in msg
    assert "test_plan_fastpath.py" in msg and "line to report" in msg
    assert isinstance(info.value.__cause__, IndexError)


@pytest.mark.parametrize("generic", [False, True])
def test_oar_error_from_kernel_gets_the_user_line_once(test_ops, monkeypatch, generic):
    if generic:
        _generic(monkeypatch)
    main = _raising_program()
    exe = fluid.Executor(fluid.CPUPlace())
    with pytest.raises(OarError) as info:
        exe.run(main, feed={"x": np.full((2, 3), 50, "float32")}, fetch_list=["boom_out"])
    msg = str(info.value)
    assert "the sum is too large" in msg
    assert msg.count("created at") == 1 and "line to report" in msg


# --- feeds after the plan is cached ---------------------------------------------------------------


def test_cached_plan_still_checks_every_feed():
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        x = fluid.layers.data("x", [4], dtype="float32")
        y = fluid.layers.scale(x, 2.0)
    exe = fluid.Executor(fluid.CPUPlace())
    ok = np.ones((3, 4), "float32")
    for _ in range(2):
        np.testing.assert_array_equal(exe.run(main, feed={"x": ok}, fetch_list=[y])[0], ok * 2)
    with pytest.raises(FeedError, match=r"feed 'x' has shape \[3, 5\]"):
        exe.run(main, feed={"x": np.ones((3, 5), "float32")}, fetch_list=[y])
    with pytest.raises(FeedError, match=r"expects dtype float32.*float64"):
        exe.run(main, feed={"x": np.ones((3, 4))}, fetch_list=[y])
    # fluid.layers.data accepts trailing dims that flatten to the declared ones
    got = exe.run(main, feed={"x": np.ones((1, 4, 1), "float32")}, fetch_list=[y])[0]
    assert got.shape == (1, 4)


# --- in-place reuse of dying inputs (kernels registered with inplace=True) --------------------------

BIG = (64, 128)  # above stepgen.MIN_DONATED_BYTES


def test_dying_temporary_is_reused_in_place():
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        x = fluid.layers.data("x", list(BIG), dtype="float32", append_batch_size=False)
        a = fluid.layers.scale(x, 2.0)
        b = fluid.layers.relu(a)
    exe = fluid.Executor(fluid.CPUPlace())
    xs = np.random.default_rng(0).standard_normal(BIG).astype("float32")
    plan = _plan_for(exe, main, {"x": xs}, [b])
    env = {"x": xs.copy()}
    plan.step_fns[0](env)
    ptr = env[a.name].ctypes.data
    plan.step_fns[1](env)
    assert env[b.name].ctypes.data == ptr  # relu wrote into the dying scale output
    np.testing.assert_array_equal(env[b.name], np.maximum(xs * 2, 0))


def test_shared_or_fed_arrays_are_never_overwritten():
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        x = fluid.layers.data("x", list(BIG), dtype="float32", append_batch_size=False)
        a = fluid.layers.scale(x, 2.0)
        view = fluid.layers.reshape(a, [BIG[1], BIG[0]])  # may be a view of a's buffer
        b = fluid.layers.relu(a)  # a's last use: but the view still shares its memory
        c = fluid.layers.relu(x)  # x is fed: the caller's array
        d = fluid.layers.elementwise_add(b, b)  # the same dying input twice
    xs = np.random.default_rng(1).standard_normal(BIG).astype("float32")
    keep = xs.copy()
    got_view, got_b, got_c, got_d = fluid.Executor(fluid.CPUPlace()).run(
        main, feed={"x": xs}, fetch_list=[view, b, c, d]
    )
    np.testing.assert_array_equal(xs, keep)
    np.testing.assert_array_equal(got_view, (keep * 2).reshape(BIG[1], BIG[0]))
    np.testing.assert_array_equal(got_b, np.maximum(keep * 2, 0))
    np.testing.assert_array_equal(got_c, np.maximum(keep, 0))
    np.testing.assert_array_equal(got_d, 2 * np.maximum(keep * 2, 0))


def test_sgd_scales_a_dying_gradient_in_place_and_updates_correctly():
    main, startup = fluid.Program(), fluid.Program()
    w0 = np.random.default_rng(2).standard_normal((64, 100)).astype("float32")
    with fluid.program_guard(main, startup):
        x = fluid.layers.data("x", [64], dtype="float32")
        y = fluid.layers.fc(
            x,
            100,
            bias_attr=False,
            param_attr=fluid.ParamAttr(
                name="w", initializer=fluid.initializer.NumpyArrayInitializer(w0)
            ),
        )
        loss = fluid.layers.mean(y)
        fluid.optimizer.SGD(0.5).minimize(loss, startup)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    xs = np.random.default_rng(3).standard_normal((8, 64)).astype("float32")
    exe.run(main, feed={"x": xs}, fetch_list=[loss], scope=scope)
    grad = np.repeat(xs.sum(0, keepdims=True).T / (8 * 100), 100, axis=1)
    np.testing.assert_allclose(
        np.array(scope.find_var("w").get_tensor()), w0 - 0.5 * grad, rtol=1e-5
    )


@pytest.mark.parametrize("fetch_a", [False, True])
def test_fused_run_donates_only_unshared_dying_inputs(test_ops, fetch_a):
    main = fluid.Program()
    block = main.global_block()
    with fluid.program_guard(main, fluid.Program()):
        x = fluid.layers.data("x", list(BIG), dtype="float32", append_batch_size=False)
        a = fluid.layers.scale(x, 2.0)
    _var(block, "probed", list(BIG))
    block.append_op("_perf_probe", {"X": [a]}, {"Out": ["probed"]}, infer=False)
    PROBED.clear()
    xs = np.ones(BIG, "float32")
    fetch = ["probed", a] if fetch_a else ["probed"]
    got = fluid.Executor(fluid.CPUPlace()).run(main, feed={"x": xs}, fetch_list=fetch)
    np.testing.assert_array_equal(got[0], xs * 2 + 1)
    assert PROBED == [set() if fetch_a else {"X"}]


# --- no_need_buffer: later readers that need only a shape do not keep an array alive ------------


def test_bias_add_input_is_replaced_by_a_shape_stand_in_until_its_grad(monkeypatch):
    monkeypatch.setenv("OAR_DISABLE_FUSION", "1")  # the bias add as its own step (oar.fusion)
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.data("x", [128], dtype="float32")
        h = fluid.layers.fc(x, 256, act="relu")  # [32, 256] float32: big enough to swap out
        loss = fluid.layers.mean(h)
        fluid.optimizer.SGD(0.1).minimize(loss, startup)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    xs = np.random.default_rng(4).standard_normal((32, 128)).astype("float32")
    exe.run(main, feed={"x": xs}, fetch_list=[loss], scope=scope)
    plan = next(p for _, p in exe._plans.values() if p.program is main)
    types = [s.op.type for s in plan.steps]
    add = types.index("elementwise_add")
    pre_bias = dict(plan.steps[add].call.singles)["X"]  # the mul output the bias add reads
    assert plan.steps[add].shrink == (pre_bias,)  # shrunk after the add ...
    grad = types.index("elementwise_add_grad")
    assert pre_bias in plan.steps[grad].frees  # ... and freed after its grad
    env = {"x": xs}
    for name in plan.scope_inputs:
        env[name] = np.array(scope.find_var(name).get_tensor())
    for i, fn in enumerate(plan.step_fns):
        fn(env)
        if add <= i < grad:
            stand_in = env[pre_bias]
            assert stand_in.shape == (32, 256) and stand_in.strides == (0, 0)
            assert not stand_in.flags.writeable


def test_no_need_buffer_grad_kernels_accept_stand_ins():
    from oar.executor.stepgen import shape_stand_in

    rng = np.random.default_rng(5)
    x, y, d = (rng.standard_normal(s).astype("float32") for s in ((4, 3), (3,), (4, 3)))
    for op_type in ("elementwise_add_grad", "elementwise_sub_grad"):
        entry = registries().kernels.lookup(op_type, "cpu", "float32")
        assert entry.no_need_buffer == ("X", "Y")
        wanted = frozenset({"X@GRAD", "Y@GRAD"})
        real = entry.kernel({"X": x, "Y": y, "Out@GRAD": d}, {"axis": -1}, wanted)
        fake = entry.kernel(
            {"X": shape_stand_in(x), "Y": shape_stand_in(y), "Out@GRAD": d}, {"axis": -1}, wanted
        )
        for slot in wanted:
            np.testing.assert_array_equal(real[slot], fake[slot])
    entry = registries().kernels.lookup("mean_grad", "cpu", "float32")
    got = entry.kernel({"X": shape_stand_in(x), "Out@GRAD": np.ones(1, "float32")}, {})
    np.testing.assert_allclose(got["X@GRAD"], np.full((4, 3), 1 / 12))


# --- the executor's per-call fast path ---------------------------------------------------------


def test_repeated_runs_follow_program_changes_and_fetch_forms():
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        x = fluid.layers.data("x", [2], dtype="float32")
        y = fluid.layers.scale(x, 2.0)
    exe = fluid.Executor(fluid.CPUPlace())
    xs = np.ones((1, 2), "float32")
    for fetch in ([y], [y.name], y, y.name, (y,)):
        for _ in range(2):
            got = exe.run(main, feed={"x": xs}, fetch_list=fetch)
            np.testing.assert_array_equal(got[0], [[2, 2]])
    # feeding by Variable and by name hit the same plan
    np.testing.assert_array_equal(exe.run(main, feed={x: xs * 3}, fetch_list=[y])[0], [[6, 6]])
    # a program change after cached runs is seen
    with fluid.program_guard(main, fluid.Program()):
        z = fluid.layers.scale(y, 10.0)
    got_y, got_z = exe.run(main, feed={"x": xs}, fetch_list=[y, z])
    np.testing.assert_array_equal(got_z, [[20, 20]])
    plans = {id(p) for _, p in exe._plans.values()}
    assert all(id(entry[1]) in plans for entry in exe._fast.values())
    # errors after caching still name the problem and the user's line
    with pytest.raises(FeedError, match="expects dtype float32") as info:
        exe.run(main, feed={"x": np.ones((1, 2))}, fetch_list=[y, z])
    assert "test_plan_fastpath.py" in str(info.value)
    from oar.errors import FetchError

    with pytest.raises(FetchError, match="no_such_var"):
        exe.run(main, feed={"x": xs}, fetch_list=["no_such_var"])
