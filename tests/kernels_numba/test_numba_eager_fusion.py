"""oar-kernels-numba's fusions in dygraph mode: a Linear layer's bias add + relu forward, its
relu + bias gradient, and the classifier loss's gradient (mean + cross-entropy + softmax + bias)
run fused in eager training, with the results of the unfused eager step and of the static
executor, at one and at two threads."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("oar_kernels_numba")
from oar_kernels_numba.compat import unavailable_reason

if unavailable_reason() is not None:
    pytest.skip(f"numba unavailable: {unavailable_reason()}", allow_module_level=True)

from oar import fluid
from oar.cpu_threads import limit_cpu_math_threads
from oar.dygraph import chain
from oar.fusion import ENV_DISABLE
from oar.testing import eager_sgd_steps

TOL = {"float32": dict(rtol=2e-5, atol=2e-6), "float64": dict(rtol=1e-11, atol=1e-13)}
BATCH = 64  # 64 x 80 activations: above the compiled kernels' small-array threshold


def _weights(dtype, sizes):
    rng = np.random.default_rng(11)
    return [
        (
            (rng.standard_normal((a, b)) * np.sqrt(2.0 / a)).astype(dtype),
            rng.uniform(-0.1, 0.1, b).astype(dtype),
        )
        for a, b in zip(sizes[:-1], sizes[1:])
    ]


def _data(dtype, sizes):
    rng = np.random.default_rng(12)
    x = rng.standard_normal((BATCH, sizes[0])).astype(dtype)
    return x, rng.integers(0, sizes[-1], (BATCH, 1)).astype(np.int64)


def _linear(w, b, act):
    init = fluid.initializer.NumpyArrayInitializer
    return fluid.dygraph.Linear(
        w.shape[0],
        w.shape[1],
        act=act,
        param_attr=fluid.ParamAttr(initializer=init(w)),
        bias_attr=fluid.ParamAttr(initializer=init(b)),
        dtype=str(w.dtype),
    )


def _eager(dtype, sizes, act, steps=2):
    weights = _weights(dtype, sizes)
    with fluid.dygraph.guard():
        model = fluid.dygraph.Sequential(
            *[
                _linear(w, b, "softmax" if i == len(weights) - 1 else act)
                for i, (w, b) in enumerate(weights)
            ]
        )
        xv, lv = _data(dtype, sizes)
        x, label = fluid.dygraph.to_variable(xv), fluid.dygraph.to_variable(lv)
        return eager_sgd_steps(
            model, lambda m: fluid.layers.mean(fluid.layers.cross_entropy(m(x), label)), steps
        )


def _static(dtype, sizes, act, steps=2):
    init = fluid.initializer.NumpyArrayInitializer
    weights = _weights(dtype, sizes)
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        h = fluid.data("x", [None, sizes[0]], dtype)
        label = fluid.data("label", [None, 1], "int64")
        for i, (w, b) in enumerate(weights):
            h = fluid.layers.fc(
                h,
                w.shape[1],
                act="softmax" if i == len(weights) - 1 else act,
                param_attr=fluid.ParamAttr(initializer=init(w)),
                bias_attr=fluid.ParamAttr(initializer=init(b)),
            )
        loss = fluid.layers.mean(fluid.layers.cross_entropy(h, label))
        fluid.optimizer.SGD(0.1).minimize(loss)
    exe, scope = fluid.Executor(fluid.CPUPlace()), fluid.Scope()
    exe.run(start, scope=scope)
    xv, lv = _data(dtype, sizes)
    losses = [
        exe.run(main, feed={"x": xv, "label": lv}, fetch_list=[loss], scope=scope)[0]
        for _ in range(steps)
    ]
    params = [np.asarray(scope.find_var(p.name).get_tensor()) for p in main.all_parameters()]
    return losses, params


@pytest.fixture
def counted(monkeypatch):
    """How many fused forward kernels and fused backward kernels ran (a chain traced op by
    op, or a Linear layer's node: both call ``chain.call_fused``)."""
    seen = {"fwd": 0, "bwd": 0}
    call = chain.call_fused

    def counting(kernel, inputs, attrs, what):
        seen["bwd" if what.startswith("fused backward") else "fwd"] += 1
        return call(kernel, inputs, attrs, what)

    monkeypatch.setattr(chain, "call_fused", counting)
    monkeypatch.delenv(ENV_DISABLE, raising=False)
    return seen


def _close(a, b, dtype):
    for x, y in zip(a, b, strict=True):
        if isinstance(x, list):
            _close(x, y, dtype)
        else:
            np.testing.assert_allclose(x, y, **TOL[dtype])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(
    "sizes, act, fused",
    [
        ((30, 80, 64, 10), "relu", (2, 3)),
        ((20, 80, 5), "relu", (1, 2)),
        ((30, 80, 10), "tanh", (0, 1)),
    ],
    ids=["mlp-relu", "one-hidden", "tanh-loss-only"],
)
def test_eager_training_fused_equals_unfused_and_static(
    counted, monkeypatch, dtype, sizes, act, fused
):
    got = _eager(dtype, sizes, act)
    hidden_fwd, bwd = fused
    assert counted == {"fwd": 2 * hidden_fwd, "bwd": 2 * bwd}  # per step: the chains fused
    monkeypatch.setenv(ENV_DISABLE, "1")
    ref = _eager(dtype, sizes, act)
    _close(got, ref, dtype)
    monkeypatch.delenv(ENV_DISABLE)
    losses, params = _static(dtype, sizes, act)
    _close([got[0], got[2]], [losses, params], dtype)


def test_user_reading_the_softmax_keeps_its_gradient(counted, monkeypatch):
    sizes = (30, 80, 10)

    def run():
        (w1, b1), (w2, b2) = _weights("float32", sizes)
        with fluid.dygraph.guard():
            l1, l2 = _linear(w1, b1, "relu"), _linear(w2, b2, "softmax")
            xv, lv = _data("float32", sizes)
            prob = l2(l1(fluid.dygraph.to_variable(xv)))
            ce = fluid.layers.cross_entropy(prob, fluid.dygraph.to_variable(lv))
            loss = fluid.layers.mean(ce)
            loss.backward()
            return [prob.gradient(), ce.gradient(), l2.bias.gradient(), l1.weight.gradient()]

    got = run()
    assert counted["bwd"] == 1  # the relu + bias chain only: prob and ce are the user's
    monkeypatch.setenv(ENV_DISABLE, "1")
    _close(got, run(), "float32")


@pytest.fixture
def deterministic():
    fluid.set_flags({"FLAGS_cpu_deterministic": True})
    yield
    fluid.set_flags({"FLAGS_cpu_deterministic": False})


def test_fused_eager_step_is_identical_at_one_and_two_threads(counted, deterministic):
    sizes = (30, 80, 64, 10)
    with limit_cpu_math_threads(1):
        one = _eager("float32", sizes, "relu")
    with limit_cpu_math_threads(2):
        two = _eager("float32", sizes, "relu")
    assert counted["bwd"]
    for a, b in zip(one[0] + one[1] + one[2], two[0] + two[1] + two[2]):
        np.testing.assert_array_equal(a, b)
