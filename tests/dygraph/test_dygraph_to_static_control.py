"""declarative: Python control flow over tensors converts, and equals eager (outputs and gradients)."""

import numpy as np
import pytest
from oar import fluid
from oar.fluid.dygraph import Linear, ProgramTranslator, declarative, to_variable


@pytest.fixture(autouse=True)
def _translator():
    ProgramTranslator.reset()
    yield
    ProgramTranslator.reset()


def _both(run):
    """``run()`` with declarative on (static program) and off (eager), inside one guard each."""
    pt = ProgramTranslator()
    results = []
    for enabled in (True, False):
        pt.enable(enabled)
        with fluid.dygraph.guard():
            results.append(run())
    pt.enable(True)
    return results


def _close(a, b, tol=1e-5):
    for x, y in zip(a, b):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=tol, atol=tol)


class IfWhileNet(fluid.dygraph.Layer):
    def __init__(self):
        super().__init__()
        self.fc = Linear(4, 4)
        self.fc2 = Linear(4, 1)

    @declarative
    def forward(self, x):
        h = self.fc(x)
        if fluid.layers.reduce_mean(h) > 0:
            h = fluid.layers.relu(h) * 2
        else:
            h = h - 1
        s = fluid.layers.reduce_sum(h)
        steps = 0
        while s < 50.0:
            s = fluid.layers.abs(s) * 2.0 + 1.0
            steps += 1
        return self.fc2(h) * s


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_if_and_while_on_tensors_equal_eager_outputs_and_gradients(sign):
    x0 = (np.random.RandomState(0).rand(2, 4) * sign).astype("float32")

    def run():
        np.random.seed(0)
        net = IfWhileNet()
        for i, p in enumerate(net.parameters()):
            p.set_value(
                np.random.RandomState(i).uniform(0.1, 0.6, p.shape).astype("float32") * sign
            )
        x = to_variable(x0)
        x.stop_gradient = False
        out = net(x)
        fluid.layers.reduce_sum(out).backward()
        return [out.numpy(), x.gradient()] + [p.gradient() for p in net.parameters()]

    static, eager = _both(run)
    _close(static, eager)


def test_if_and_while_become_cond_and_while_ops_of_a_runnable_program():
    x0 = np.random.RandomState(2).rand(2, 4).astype("float32")
    with fluid.dygraph.guard():
        net = IfWhileNet()
        main, startup, inputs, outputs = ProgramTranslator().get_program(
            net.forward, to_variable(x0)
        )
        expected = net(to_variable(x0)).numpy()
    types = [op.type for op in main.global_block().ops]
    assert "conditional_block" in types and "while" in types
    assert len(inputs) == 1 and len(outputs) == 1
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    with fluid.scope_guard(scope):
        exe.run(startup)  # the layers' parameter values
        (got,) = exe.run(main, feed={inputs[0].name: x0}, fetch_list=outputs)
    np.testing.assert_allclose(got, expected, rtol=1e-5)


def _count_to(x, n):
    total = fluid.layers.zeros_like(x)
    last = 0
    for i in range(n):
        total = total + x
        last = i
    return total, last


@declarative
def for_range(x, n):
    a = _count_to(x, 4)  # a Python bound: unrolled
    b = _count_to(x, n)  # a tensor bound: a while loop
    return a, b


def test_for_range_with_python_and_tensor_bounds():
    def run():
        x = to_variable(np.full((2, 3), 0.5, "float32"))
        n = to_variable(np.array([5], "int64"))
        (a, last_a), (b, last_b) = for_range(x, n)
        last_b = last_b.numpy() if hasattr(last_b, "numpy") else last_b  # a tensor when static
        return [a.numpy(), last_a, b.numpy(), np.asarray(last_b).reshape(-1)]

    static, eager = _both(run)
    _close(static, eager)
    np.testing.assert_allclose(static[2], np.full((2, 3), 0.5 * 5))
    assert static[1] == 3 and static[3].tolist() == [4]


def _loop_with_jumps(x, n):
    i = fluid.layers.fill_constant([1], "int64", 0)
    two = fluid.layers.fill_constant([1], "int64", 2)
    acc = fluid.layers.zeros_like(x)
    while i < n:
        i = i + 1
        if fluid.layers.reduce_sum(acc) > 20.0:
            break
        if fluid.layers.equal(i, two):
            continue
        acc = acc + x
    return acc, i


@declarative
def jumps(x, n):
    return _loop_with_jumps(x, n)


@pytest.mark.parametrize("limit", [4, 30])
def test_break_and_continue_in_a_tensor_loop(limit):
    def run():
        x = to_variable(np.ones((2, 3), "float32"))
        n = to_variable(np.array([limit], "int64"))
        return [v.numpy() for v in jumps(x, n)]

    static, eager = _both(run)
    _close(static, eager)
    expected_rows = 3 if limit == 4 else 4  # skipped i == 2; stops once the sum passes 20
    assert static[0][0, 0] == expected_rows


def _sign(x):
    if fluid.layers.reduce_mean(x) > 0:
        return x * 3.0
    y = x - 1.0
    return y


class Nested(fluid.dygraph.Layer):
    def __init__(self):
        super().__init__()
        self.fc = Linear(3, 3)

    def forward(self, x):  # not decorated: converted because the declarative caller calls it
        h = self.fc(x)
        if fluid.layers.reduce_sum(h) > 100.0:
            h = h * 0.0
        return h


class Outer(fluid.dygraph.Layer):
    def __init__(self):
        super().__init__()
        self.inner = Nested()

    @declarative
    def forward(self, x):
        return _sign(self.inner(x))


@pytest.mark.parametrize("shift", [2.0, -2.0])
def test_nested_function_and_layer_calls_convert_with_return_in_if(shift):
    def run():
        net = Outer()
        for i, p in enumerate(net.parameters()):
            p.set_value(np.random.RandomState(i).rand(*p.shape).astype("float32"))
        x = to_variable(np.random.RandomState(9).rand(2, 3).astype("float32") + shift)
        out = net(x)
        fluid.layers.mean(out).backward()
        return [out.numpy()] + [p.gradient() for p in net.parameters()]

    static, eager = _both(run)
    _close(static, eager)
    code = ProgramTranslator().get_code(_sign)
    assert "convert_ifelse" in code and "_jst_ret" in code


@declarative
def logic(x):
    s = fluid.layers.reduce_sum(x)
    if s > 0 and not (s > 100):
        y = x + 1
    else:
        y = x - 1
    z = y * 2 if s < 3 else y
    for row in x:
        z = z + fluid.layers.reduce_sum(row)
    return z


@pytest.mark.parametrize("value", [0.1, 50.0, -1.0])
def test_and_or_not_ifexp_and_iteration_over_a_tensor(value):
    def run():
        return logic(to_variable(np.full((2, 2), value, "float32"))).numpy()

    static, eager = _both(run)
    _close([static], [eager])


@declarative
def with_print(x):
    y = x * 2
    print(y)
    return y


def test_print_of_a_tensor_prints_when_the_program_runs(capsys):
    with fluid.dygraph.guard():
        out = with_print(to_variable(np.full((1, 2), 1.5, "float32")))
    np.testing.assert_allclose(out.numpy(), [[3.0, 3.0]])
    assert "3" in capsys.readouterr().out


class SmallCNN(fluid.dygraph.Layer):
    def __init__(self):
        super().__init__()
        from oar.fluid.dygraph import BatchNorm, Conv2D, Embedding, Pool2D, Sequential

        self.conv = Conv2D(1, 2, 3, padding=1)
        self.bn = BatchNorm(2, act="relu")
        self.pool = Pool2D(2, pool_type="max", pool_stride=2)
        self.head = Sequential(Linear(8, 4), Linear(4, 2))
        self.emb = Embedding([10, 8])

    @declarative
    def forward(self, img, ids):
        h = self.pool(self.bn(self.conv(img)))
        h = fluid.layers.reshape(h, [h.shape[0], -1])
        return self.head(h + fluid.layers.reduce_sum(self.emb(ids), dim=1))


def test_oar_layers_inside_declarative_equal_eager_with_batch_norm_state():
    def run():
        net = SmallCNN()
        for i, p in enumerate(net.parameters()):
            p.set_value(np.random.RandomState(i).rand(*p.shape).astype(p.dtype))
        img = to_variable(np.random.RandomState(5).rand(2, 1, 4, 4).astype("float32"))
        ids = to_variable(np.array([1, 2, 3, 4], "int64").reshape(2, 2))
        out = net(img, ids)
        fluid.layers.mean(out).backward()
        grads = [p.gradient() for p in net.parameters() if p.trainable]
        return [out.numpy(), net.bn._mean.numpy(), net.bn._variance.numpy()] + grads

    static, eager = _both(run)
    _close(static, eager, tol=1e-4)


@declarative
def collect(x, n):
    outs = []
    i = 0
    while i < n:
        outs.append(x * 2.0)
        x = x + 1.0
        i = i + 1
    return fluid.layers.stack(outs), fluid.layers.concat(outs, axis=0)


def test_list_appended_in_a_tensor_loop_becomes_a_tensor_array():
    def run():
        results = []
        for steps in (3, 5):  # one program: the array starts empty at every run
            x = to_variable(np.ones((1, 2), "float32"))
            x.stop_gradient = False
            stacked, joined = collect(x, to_variable(np.array([steps], "int64")))
            fluid.layers.reduce_sum(stacked * stacked).backward()
            results += [stacked.numpy(), joined.numpy(), x.gradient()]
        return results

    static, eager = _both(run)
    _close(static, eager)
    assert static[3].shape == (5, 1, 2)
    assert "convert_append" in ProgramTranslator().get_code(collect)


class EmbedNet(fluid.dygraph.Layer):
    def __init__(self, is_sparse):
        super().__init__()
        from oar.fluid.dygraph import Embedding

        self.emb = Embedding([10, 3], is_sparse=is_sparse, padding_idx=0)

    @declarative
    def forward(self, ids):
        return self.emb(ids)


@pytest.mark.parametrize("is_sparse", [False, True])
@pytest.mark.parametrize("ids_shape", [(2, 2), (3, 1), (4,)])
def test_embedding_takes_ids_of_any_shape_in_both_modes(ids_shape, is_sparse):
    """Embedding is lookup_table_v2 in dygraph, so declarative accepts what eager accepts
    (output ids.shape + [dim], as Fluid 1.8.5's dygraph Embedding)."""
    ids_np = np.array([0, 3, 3, 7][: int(np.prod(ids_shape))], "int64").reshape(ids_shape)

    def run():
        net = EmbedNet(is_sparse)
        net.emb.weight.set_value(np.arange(30, dtype="float32").reshape(10, 3))
        out = net(to_variable(ids_np))
        assert out.shape == list(ids_shape) + [3]
        fluid.layers.reduce_sum(out * out).backward()
        return [out.numpy(), net.emb.weight.gradient()]

    static, eager = _both(run)
    _close(static, eager)
    table = np.arange(30, dtype="float32").reshape(10, 3)
    want = np.where(ids_np[..., None] == 0, 0, table[ids_np])  # row 0 is the padding row
    np.testing.assert_array_equal(eager[0], want)
