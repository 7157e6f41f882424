"""Control flow over sub-blocks: While, while_loop, cond, case, switch_case, Switch, is_empty."""

from __future__ import annotations

import json
import os
import subprocess

import numpy as np
import pytest
from oar import fluid
from oar.errors import OarError
from oar.testing import OpCase, check_case

layers = fluid.layers


@pytest.fixture(autouse=True)
def _own_names():
    """Fresh unique-name counters per test: the names (and so the initial values) of other
    modules' parameters do not depend on whether these tests ran first."""
    with fluid.unique_name.guard():
        yield


CASES = [
    OpCase("is_empty", {"X": np.zeros([0, 3], "float32")}, ref=lambda X: {"Out": np.array([True])}),
    OpCase(
        "is_empty",
        {"X": np.ones([2, 3], "float32")},
        ref=lambda X: {"Out": np.array([False])},
        name="full",
    ),
]


_MASK = np.array([[True], [False], [True]])
_X = np.arange(6, dtype="float64").reshape(3, 2)
CASES += [
    OpCase(
        "split_lod_tensor",
        {"X": _X, "Mask": _MASK},
        ref=lambda X, Mask, **kw: {"OutTrue": X[Mask[:, 0]], "OutFalse": X[~Mask[:, 0]]},
        grad=["X"],
    ),
    OpCase(
        "merge_lod_tensor",
        {"X": _X, "Mask": _MASK, "InTrue": _X[[0, 2]] + 1, "InFalse": _X[[1]] - 1},
        ref=lambda X, Mask, InTrue, InFalse, **kw: {
            "Out": np.stack([InTrue[0], InFalse[0], InTrue[1]])
        },
        grad=["InTrue", "InFalse"],
    ),
]
# a mask with one value per sequence selects whole sequences (IfElse over LoD input)
_SEQ_MASK, _SEQ_X = np.array([[True], [False], [True]]), np.arange(12.0).reshape(6, 2)
_T_ROWS, _F_ROWS = [0, 1, 3, 4, 5], [2]  # sequences of 2, 1 and 3 rows
CASES += [
    OpCase(
        "split_lod_tensor",
        {"X": _SEQ_X, "Mask": _SEQ_MASK},
        ref=lambda X, Mask, **kw: {"OutTrue": X[_T_ROWS], "OutFalse": X[_F_ROWS]},
        grad=["X"],
        lod={"x_0": [[2, 1, 3]]},
        name="sequences",
    ),
    OpCase(
        "merge_lod_tensor",
        {
            "X": _SEQ_X,
            "Mask": _SEQ_MASK,
            "InTrue": _SEQ_X[_T_ROWS] + 1,
            "InFalse": -_SEQ_X[_F_ROWS],
        },
        ref=lambda X, Mask, InTrue, InFalse, **kw: {
            "Out": np.concatenate([InTrue[:2], InFalse, InTrue[2:]])
        },
        grad=["InTrue", "InFalse"],
        lod={"x_0": [[2, 1, 3]]},
        name="sequences",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_is_empty_cases(case):
    check_case(case)


def _exe_run(main, start, feed=None, fetch=()):
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(start, scope=scope)
    return exe, scope, exe.run(main, feed=feed or {}, fetch_list=list(fetch), scope=scope)


def _sum_loop(n_steps: int = 10):
    """sum of 0..n-1 with a While loop; also writes each partial sum into an array."""
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        i = layers.fill_constant([1], "int64", 0)
        n = layers.fill_constant([1], "int64", n_steps)
        s = layers.fill_constant([1], "float32", 0.0)
        arr = layers.create_array("float32")
        c = layers.less_than(i, n)
        loop = layers.While(c)
        with loop.block():
            s2 = s + layers.cast(i, "float32")
            layers.assign(s2, s)
            layers.array_write(s2, i, array=arr)
            layers.increment(i, in_place=True)
            layers.less_than(i, n, cond=c)
        partial, _ = layers.tensor_array_to_tensor(arr, axis=0)
    return main, start, [s, i, partial]


def test_while_loop_runs_its_block_until_the_condition_fails():
    main, start, fetch = _sum_loop(10)
    exe, scope, (s, i, partial) = _exe_run(main, start, fetch=fetch)
    assert s.tolist() == [45.0] and i.tolist() == [10]
    np.testing.assert_array_equal(partial, np.cumsum(np.arange(10)))
    # a second run starts from fresh values and gives the same results
    s2, i2, _ = exe.run(main, fetch_list=fetch, scope=scope)
    assert s2.tolist() == [45.0] and i2.tolist() == [10]
    op = main.global_block().ops[-2]
    assert op.type == "while" and op.attr("sub_block") == 1
    assert set(op.input("X")) >= {"" + fetch[0].name, fetch[1].name}


def test_the_sub_block_plan_is_compiled_once(monkeypatch):
    from oar.executor import plan as plan_mod

    main, start, fetch = _sum_loop(50)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(start, scope=scope)
    built = []
    orig = plan_mod.Plan.__init__

    def counting(self, program, *a, **kw):
        built.append(kw.get("block_idx", 0))
        orig(self, program, *a, **kw)

    monkeypatch.setattr(plan_mod.Plan, "__init__", counting)
    for _ in range(3):
        exe.run(main, fetch_list=fetch, scope=scope)
    assert built == [0, 1]  # the main block and the loop body, once each for 3 x 50 passes


def test_while_loop_function_and_nested_structures():
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        i = layers.fill_constant([1], "int64", 0)
        x = layers.fill_constant([2], "float32", 1.0)
        ten = layers.fill_constant([1], "int64", 5)
        i2, x2 = layers.while_loop(lambda i, x: i < ten, lambda i, x: [i + 1, x * 2.0], [i, x])
    _, _, (a, b) = _exe_run(main, start, fetch=[i2, x2])
    assert a.tolist() == [5] and b.tolist() == [32.0, 32.0]


def test_nested_while_loops():
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        i = layers.fill_constant([1], "int64", 0)
        total = layers.fill_constant([1], "int64", 0)
        three = layers.fill_constant([1], "int64", 3)

        def outer(i, total):
            j = layers.fill_constant([1], "int64", 0)
            _, t = layers.while_loop(lambda j, t: j < i, lambda j, t: [j + 1, t + j], [j, total])
            return [i + 1, t]

        _, t = layers.while_loop(lambda i, t: i < three, outer, [i, total])
    _, _, (t,) = _exe_run(main, start, fetch=[t])
    assert t.tolist() == [0 + 0 + 1]  # inner sums: i=0 -> 0, i=1 -> 0, i=2 -> 0+1


@pytest.mark.parametrize("xval, want", [(0.5, 1.5), (3.0, -3.0)])
def test_cond_takes_one_branch(xval, want):
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        x = fluid.data("x", [1], "float32")
        one = layers.fill_constant([1], "float32", 1.0)
        pred = layers.less_than(x, one)
        out = layers.cond(pred, lambda: x + 1.0, lambda: layers.scale(x, -1.0))
        pair = layers.cond(pred, lambda: (x, [x * 2.0]), lambda: (x * 0.0, [x]))
        nothing = layers.cond(pred, lambda: None, lambda: None)
    assert nothing is None and isinstance(pair, tuple) and isinstance(pair[1], list)
    _, _, (o, p0, p1) = _exe_run(
        main, start, {"x": np.array([xval], "float32")}, [out, pair[0], pair[1][0]]
    )
    assert o.tolist() == [want]
    assert (p0.tolist(), p1.tolist()) == (([xval], [2 * xval]) if xval < 1 else ([0.0], [xval]))


def test_cond_branches_with_different_structures_is_a_clear_error():
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        x = fluid.data("x", [1], "float32")
        pred = layers.less_than(x, x)
        with pytest.raises(ValueError, match=r"cond.*same structure") as info:
            layers.cond(pred, lambda: x, lambda: (x, x))
        assert "test_control_flow.py" in str(info.value)
        with pytest.raises(ValueError, match="same structure"):
            layers.cond(pred, lambda: x, lambda: None)


def test_while_condition_must_be_a_bool_scalar():
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        f = layers.fill_constant([1], "float32", 1.0)
        with pytest.raises(TypeError, match=r"While.*bool.*float32") as info:
            layers.While(f)
        assert "test_control_flow.py" in str(info.value)
        b = layers.fill_constant([3], "bool", True)
        with pytest.raises(TypeError, match=r"While.*one element.*\[3\]"):
            layers.While(b)
        with pytest.raises(TypeError, match="While"):
            layers.While(True)
        with pytest.raises(TypeError, match="while_loop.*result of cond"):
            layers.while_loop(lambda i: i, lambda i: i, [f])


def test_case_and_switch_case():
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        x = fluid.data("x", [1], "int64")
        one = layers.fill_constant([1], "int64", 1)
        two = layers.fill_constant([1], "int64", 2)
        c = layers.case(
            [(layers.equal(x, one), lambda: layers.fill_constant([1], "float32", 10.0)),
             (layers.equal(x, two), lambda: layers.fill_constant([1], "float32", 20.0))],
            default=lambda: layers.fill_constant([1], "float32", -1.0),
        )  # fmt: skip
        s = layers.switch_case(
            x,
            {1: lambda: layers.fill_constant([1], "float32", 1.5),
             4: lambda: layers.fill_constant([1], "float32", 4.5)},
        )  # fmt: skip
        s2 = layers.switch_case(x, [lambda: x * 0, lambda: x * 10], default=lambda: x * 100)
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(start)
    got = {
        k: [v.item() for v in exe.run(main, {"x": np.array([k])}, fetch_list=[c, s, s2])]
        for k in (0, 1, 2, 4)
    }
    assert got == {
        0: [-1.0, 4.5, 0],
        1: [10.0, 1.5, 10],
        2: [20.0, 4.5, 200],
        4: [-1.0, 4.5, 400],
    }


def test_switch_runs_the_first_true_case_or_the_default():
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        x = fluid.data("x", [1], "float32")
        out = layers.create_global_var([1], 0.0, "float32", persistable=True, name="sw_out")
        with layers.Switch() as switch:
            with switch.case(layers.less_than(x, layers.fill_constant([1], "float32", 1.0))):
                layers.assign(layers.fill_constant([1], "float32", 1.0), out)
            with switch.case(layers.less_than(x, layers.fill_constant([1], "float32", 5.0))):
                layers.assign(layers.fill_constant([1], "float32", 5.0), out)
            with switch.default():
                layers.assign(layers.fill_constant([1], "float32", 9.0), out)
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(start)
    vals = [
        exe.run(main, {"x": np.array([v], "float32")}, fetch_list=[out])[0].item()
        for v in (0, 3, 7)
    ]
    assert vals == [1.0, 5.0, 9.0]


def test_is_empty():
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        x = fluid.data("x", [-1, 2], "float32")
        e = layers.is_empty(x)
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(start)
    assert exe.run(main, {"x": np.zeros([0, 2], "float32")}, fetch_list=[e])[0].tolist() == [True]
    assert exe.run(main, {"x": np.zeros([3, 2], "float32")}, fetch_list=[e])[0].tolist() == [False]


def test_sub_blocks_survive_clone_json_and_pruning():
    from oar.framework.program import Program

    main, start, fetch = _sum_loop(4)
    for p in (main.clone(), main.clone(for_test=True), Program.from_dict(main.to_dict())):
        assert p.num_blocks == 2
        _, _, (s, _, _) = _exe_run(p, start, fetch=fetch)
        assert s.tolist() == [6.0]
    pruned = main._prune([fetch[0]])
    assert [op.type for op in pruned.global_block().ops][-1] == "while"
    _, _, (s,) = _exe_run(pruned, start, fetch=[fetch[0]])
    assert s.tolist() == [6.0]


def test_inference_model_with_a_loop_round_trips(tmp_path):
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        x = fluid.data("x", [1, 2], "float32")
        i = layers.fill_constant([1], "int64", 0)
        three = layers.fill_constant([1], "int64", 3)
        _, y = layers.while_loop(lambda i, y: i < three, lambda i, y: [i + 1, y * 2.0], [i, x])
        out = layers.fc(y, 3)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(start, scope=scope)
    feed = {"x": np.array([1.0, 2.0], "float32").reshape(1, 2)}
    with fluid.scope_guard(scope):
        want = exe.run(main, feed, fetch_list=[out])[0]
        fluid.io.save_inference_model(str(tmp_path), ["x"], [out], exe, main_program=main)
    scope2 = fluid.Scope()
    with fluid.scope_guard(scope2):
        prog, feeds, fetches = fluid.io.load_inference_model(str(tmp_path), exe)
        assert prog.num_blocks == 2
        got = exe.run(prog, {feeds[0]: feed["x"]}, fetch_list=fetches)[0]
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_errors_inside_a_loop_body_name_the_op_and_line():
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        i = layers.fill_constant([1], "int64", 0)
        two = layers.fill_constant([1], "int64", 2)
        arr = layers.array_write(layers.fill_constant([1], "float32", 1.0), i)

        def body(i):
            layers.array_read(arr, i + 3)  # index 3 was never written: fails at run time
            return [i + 1]

        layers.while_loop(lambda i: i < two, body, [i])
    with pytest.raises(OarError, match="read_from_array") as info:
        _exe_run(main, start)
    assert "test_control_flow.py" in str(info.value)


def test_dygraph_control_flow_runs_eagerly():
    with fluid.dygraph.guard():
        x = fluid.dygraph.to_variable(np.array([2.0], "float32"))
        i = fluid.dygraph.to_variable(np.array([0], "int64"))
        i2, y = layers.while_loop(lambda i, y: i < 3, lambda i, y: [i + 1, y * 2.0], [i, x])
        assert y.numpy().tolist() == [16.0]
        pred = x > 1.0
        assert layers.cond(pred, lambda: x + 1.0, lambda: x - 1.0).numpy().tolist() == [3.0]
        c = layers.case([(x < 1.0, lambda: x * 0.0)], default=lambda: x * 3.0)
        assert c.numpy().tolist() == [6.0]
        s = layers.switch_case(i2, {3: lambda: x * 5.0}, default=lambda: x)
        assert s.numpy().tolist() == [10.0]


def _bptt_program(T, B, D):
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        x = fluid.data("x", [T, B, D], "float32")
        h0 = fluid.data("h0", [B, D], "float32")
        coef = fluid.data("coef", [T * B, D], "float32")
        for v in (x, h0):
            v.stop_gradient = False
        w = layers.create_parameter([D, D], "float32", name="bptt_w")
        xs = layers.create_array("float32")
        for t in range(T):
            xt = layers.reshape(layers.slice(x, [0], [t], [t + 1]), [B, D])
            layers.array_write(xt, layers.fill_constant([1], "int64", t), array=xs)
        hs = layers.create_array("float32")
        i = layers.fill_constant([1], "int64", 0)
        n = layers.fill_constant([1], "int64", T)
        h = layers.assign(h0)
        c = layers.less_than(i, n)
        loop = layers.While(c)
        with loop.block():
            xt = layers.array_read(xs, i)
            h_new = layers.tanh(layers.matmul(h, w) + xt)
            layers.array_write(h_new, i, array=hs)
            layers.assign(h_new, h)
            layers.increment(i, in_place=True)
            layers.less_than(i, n, cond=c)
        stacked, _ = layers.tensor_array_to_tensor(hs, axis=0)
        loss = layers.reduce_sum(stacked * coef) + layers.reduce_sum(h)
        grads = fluid.gradients([loss], [w, h0, x])
    return main, start, loss, grads


def test_while_gradients_equal_numpy_bptt():
    T, B, D = 4, 2, 3
    rng = np.random.RandomState(1)
    x = rng.randn(T, B, D).astype("float32") * 0.5
    h0 = rng.randn(B, D).astype("float32") * 0.5
    coef = rng.randn(T * B, D).astype("float32")
    main, start, loss, grads = _bptt_program(T, B, D)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(start, scope=scope)
    w = np.array(scope.find_var("bptt_w").get_tensor())
    feed = {"x": x, "h0": h0, "coef": coef}
    got = exe.run(main, feed, fetch_list=[loss] + grads, scope=scope)
    # numpy BPTT
    hs = [h0.astype("float64")]
    for t in range(T):
        hs.append(np.tanh(hs[-1] @ w + x[t]))
    c = coef.reshape(T, B, D)
    want_loss = sum((c[t] * hs[t + 1]).sum() for t in range(T)) + hs[-1].sum()
    dh = np.ones((B, D))
    dw = np.zeros((D, D))
    dx = np.zeros((T, B, D))
    for t in reversed(range(T)):
        dh = dh + c[t]
        da = dh * (1 - hs[t + 1] ** 2)
        dw += hs[t].T @ da
        dx[t] = da
        dh = da @ w.T
    np.testing.assert_allclose(got[0].item(), want_loss, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got[1], dw, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got[2], dh, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got[3], dx, rtol=1e-4, atol=1e-5)
    # a finite difference through the whole loop agrees too
    eps = 1e-3
    x2 = x.copy()
    x2[1, 0, 2] += eps
    up = exe.run(main, {**feed, "x": x2}, fetch_list=[loss], scope=scope)[0].item()
    x2[1, 0, 2] -= 2 * eps
    down = exe.run(main, {**feed, "x": x2}, fetch_list=[loss], scope=scope)[0].item()
    np.testing.assert_allclose((up - down) / (2 * eps), dx[1, 0, 2], rtol=2e-2)


def test_while_loop_gradient_and_training():
    main, start = fluid.Program(), fluid.Program()
    main.random_seed = start.random_seed = 1  # loop_w's initial value, whatever ran before
    with fluid.program_guard(main, start):
        x = fluid.data("x", [2, 3], "float32")
        i = layers.fill_constant([1], "int64", 0)
        three = layers.fill_constant([1], "int64", 3)
        w = layers.create_parameter([3, 3], "float32", name="loop_w")

        def body(i, h):
            return [i + 1, layers.matmul(h, w) * 0.5 + h]

        # x is a data variable (stop_gradient): the loop still trains loop_w
        _, h = layers.while_loop(lambda i, h: i < three, body, [i, x])
        loss = layers.reduce_mean(layers.square(h - 1.0))
        fluid.optimizer.SGD(0.1).minimize(loss)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(start, scope=scope)
    feed = {"x": np.random.RandomState(0).rand(2, 3).astype("float32")}
    losses = [exe.run(main, feed, fetch_list=[loss], scope=scope)[0].item() for _ in range(20)]
    assert losses[-1] < losses[0] * 0.5


@pytest.mark.parametrize("sign, want", [(1.0, "square"), (-1.0, "triple")])
def test_cond_gradient_follows_the_taken_branch(sign, want):
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        x = fluid.data("x", [3], "float32")
        x.stop_gradient = False
        pred = layers.reduce_sum(x) > 0.0
        y = layers.cond(pred, lambda: x * x, lambda: x * 3.0)
        (g,) = fluid.gradients([layers.reduce_sum(y)], [x])
    xv = np.array([0.5, 1.0, 2.0], "float32") * sign
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(start)
    (gv,) = exe.run(main, {"x": xv}, fetch_list=[g])
    np.testing.assert_allclose(gv, 2 * xv if want == "square" else np.full(3, 3.0), rtol=1e-6)


def test_static_rnn_outputs_and_gradients_equal_numpy_bptt():
    T, B, D, H = 3, 2, 3, 4
    rng = np.random.RandomState(2)
    x = rng.randn(T, B, D).astype("float32") * 0.5
    coef = rng.randn(T, B, H).astype("float32")
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        xv = fluid.data("x", [T, B, D], "float32")
        xv.stop_gradient = False
        cv = fluid.data("coef", [T, B, H], "float32")
        u = layers.create_parameter([D, H], "float32", name="rnn_u")
        w = layers.create_parameter([H, H], "float32", name="rnn_w")
        rnn = layers.StaticRNN()
        with rnn.step():
            xt = rnn.step_input(xv)
            prev = rnn.memory(shape=[-1, H], batch_ref=xt)
            h = layers.tanh(layers.matmul(xt, u) + layers.matmul(prev, w))
            rnn.update_memory(prev, h)
            rnn.step_output(h)
        out = rnn()
        loss = layers.reduce_sum(out * cv)
        grads = fluid.gradients([loss], [u, w, xv])
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(start, scope=scope)
    uv = np.array(scope.find_var("rnn_u").get_tensor()).astype("float64")
    wv = np.array(scope.find_var("rnn_w").get_tensor()).astype("float64")
    got = exe.run(main, {"x": x, "coef": coef}, fetch_list=[out] + grads, scope=scope)
    hs = [np.zeros((B, H))]
    for t in range(T):
        hs.append(np.tanh(x[t] @ uv + hs[-1] @ wv))
    np.testing.assert_allclose(got[0], np.stack(hs[1:]), rtol=1e-5, atol=1e-6)
    du, dw, dx = np.zeros_like(uv), np.zeros_like(wv), np.zeros((T, B, D))
    dh = np.zeros((B, H))
    for t in reversed(range(T)):
        da = (dh + coef[t]) * (1 - hs[t + 1] ** 2)
        du += x[t].T @ da
        dw += hs[t].T @ da
        dx[t] = da @ uv.T
        dh = da @ wv.T
    for g, want in zip(got[1:], (du, dw, dx)):
        np.testing.assert_allclose(g, want, rtol=1e-4, atol=1e-5)


def test_static_rnn_misuse_is_a_clear_error():
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        x = fluid.data("x", [-1, 2, 3], "float32")
        rnn = layers.StaticRNN()
        with pytest.raises(TypeError, match=r"StaticRNN.*sequence length"):
            with rnn.step():
                rnn.step_input(x)
        rnn2 = layers.StaticRNN()
        with pytest.raises(ValueError, match="inside"):
            rnn2.step_output(x)


def test_ifelse_rows_and_gradients():
    x = np.array([[-1.0, 2.0], [3.0, 4.0], [-5.0, 6.0], [7.0, -8.0]], "float32")
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        xv = fluid.data("x", [4, 2], "float32")
        xv.stop_gradient = False
        zero = layers.fill_constant([4, 1], "float32", 0.0)
        cond = layers.less_than(layers.slice(xv, [1], [0], [1]), zero)
        ie = layers.IfElse(cond)
        with ie.true_block():
            ie.output(ie.input(xv) * 2.0)
        with ie.false_block():
            ie.output(ie.input(xv) - 1.0)
        (out,) = ie()
        (g,) = fluid.gradients([layers.reduce_sum(out * out)], [xv])
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(start)
    o, gv = exe.run(main, {"x": x}, fetch_list=[out, g])
    neg = x[:, :1] < 0
    want = np.where(neg, x * 2, x - 1)
    np.testing.assert_allclose(o, want)
    np.testing.assert_allclose(gv, np.where(neg, 2 * want * 2, 2 * want), rtol=1e-6)


def test_ifelse_misuse():
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        x = fluid.data("x", [4, 2], "float32")
        with pytest.raises(TypeError, match="IfElse.*bool"):
            layers.IfElse(x)
        ie = layers.IfElse(layers.less_than(x, x))
        with pytest.raises(ValueError, match="inside true_block"):
            ie.input(x)
        with ie.true_block():
            ie.output(ie.input(x))
        with pytest.raises(ValueError, match="same number"):
            ie()


FLUID18 = os.environ.get("FLUID18_PYTHON", "")  # the Fluid 1.8.5 oracle (docs/oracle.md)
_FLUID_LOADER = r"""
import json, numpy as np, paddle.fluid as fluid
exe = fluid.Executor(fluid.CPUPlace())
prog, feeds, fetches = fluid.io.load_inference_model("m", exe)
out = exe.run(prog, {feeds[0]: np.array([[1.0, 2.0]], "float32")}, fetch_list=fetches)[0]
json.dump(out.tolist(), open("out.json", "w"))
"""


@pytest.mark.skipif(not os.path.exists(FLUID18), reason="Fluid 1.8.5 oracle not installed")
def test_a_loop_model_written_by_oar_runs_in_fluid(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        x = fluid.data("x", [1, 2], "float32")
        i = layers.fill_constant([1], "int64", 0)
        three = layers.fill_constant([1], "int64", 3)
        _, y = layers.while_loop(
            lambda i, y: i < three, lambda i, y: [i + 1, y * 2.0], [i, layers.scale(x, 1.0)]
        )
        out = layers.fc(y, 3)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    with fluid.scope_guard(scope):
        exe.run(start)
        want = exe.run(main, {"x": np.array([[1.0, 2.0]], "float32")}, fetch_list=[out])[0]
        fluid.io.save_inference_model(
            "m", ["x"], [out], exe, main, format="fluid", program_format="fluid_program"
        )
    r = subprocess.run(
        [FLUID18, "-c", _FLUID_LOADER], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stderr[-3000:]
    got = json.load(open(tmp_path / "out.json"))
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
