"""ExponentialMovingAverage and ModelAverage: averages against numpy, apply/restore guards."""

import numpy as np
import pytest
from oar import fluid

rng = np.random.default_rng(5)
W0 = rng.uniform(-1, 1, (3, 2)).astype("float32")
X = rng.uniform(-1, 1, (4, 3)).astype("float32")
Y = rng.uniform(-1, 1, (4, 2)).astype("float32")


def build(make_avg):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.data("x", [3])
        y = fluid.layers.data("y", [2])
        pred = fluid.layers.fc(
            x,
            2,
            bias_attr=False,
            param_attr=fluid.ParamAttr(
                name="w", initializer=fluid.initializer.NumpyArrayInitializer(W0)
            ),
        )
        loss = fluid.layers.mean(fluid.layers.square(pred - y))
        fluid.optimizer.SGD(0.3).minimize(loss)
        avg = make_avg()
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    with fluid.scope_guard(scope):
        exe.run(startup)
    return main, exe, scope, avg


def w_of(scope):
    return np.array(scope.find_var("w").value)


def test_ema_apply_gives_bias_corrected_average_and_restores():
    decay = 0.9

    def make():
        ema = fluid.optimizer.ExponentialMovingAverage(decay)
        ema.update()
        return ema

    main, exe, scope, ema = build(make)
    shadow = np.zeros((3, 2))
    with fluid.scope_guard(scope):
        for t in range(1, 6):
            exe.run(main, feed={"x": X, "y": Y})
            w = w_of(scope)
            shadow = decay * shadow + (1 - decay) * w
            with ema.apply(exe):
                np.testing.assert_allclose(
                    w_of(scope), shadow / (1 - decay**t), rtol=1e-5, atol=1e-6
                )
            np.testing.assert_array_equal(w_of(scope), w)  # restored
        with ema.apply(exe, need_restore=False):
            pass
        np.testing.assert_allclose(w_of(scope), shadow / (1 - decay**5), rtol=1e-5, atol=1e-6)
        ema.restore(exe)
        np.testing.assert_array_equal(w_of(scope), w)


def test_ema_thres_steps_caps_the_decay():
    def make():
        step = fluid.layers.autoincreased_step_counter("my_step", begin=0)
        ema = fluid.optimizer.ExponentialMovingAverage(0.99, thres_steps=step)
        ema.update()
        return ema

    main, exe, scope, ema = build(make)
    shadow = np.zeros((3, 2))
    with fluid.scope_guard(scope):
        for t in range(4):  # my_step reads t on run t
            exe.run(main, feed={"x": X, "y": Y})
            d = min(0.99, (t + 1) / (t + 10))
            shadow = d * shadow + (1 - d) * w_of(scope)
            ema_var = np.array(scope.find_var(ema._ema_vars["w"].name).value)
            np.testing.assert_allclose(ema_var, shadow, rtol=1e-5, atol=1e-7)


def test_ema_restores_even_when_the_block_raises():
    def make():
        ema = fluid.optimizer.ExponentialMovingAverage(0.5)
        ema.update()
        return ema

    main, exe, scope, ema = build(make)
    with fluid.scope_guard(scope):
        exe.run(main, feed={"x": X, "y": Y})
        w = w_of(scope)
        with pytest.raises(RuntimeError), ema.apply(exe):
            raise RuntimeError("evaluation failed")
        np.testing.assert_array_equal(w_of(scope), w)


def average_accumulates_ref(ws, rate, min_w, max_w):
    """numpy replay of Fluid's window rule; returns the averaged parameter after len(ws) steps."""
    s1 = s2 = s3 = 0
    n_acc = old = n_upd = 0
    for w in ws:
        n_upd += 1
        n_acc += 1
        s1 = s1 + w
        if n_acc >= min_w and n_acc >= min(max_w, int(n_upd * rate)):
            s3, s1, s2, old, n_acc = s1 + s2, 0, 0, n_acc, 0
    return (s1 + s2 + s3) / (n_acc + old)


@pytest.mark.parametrize("rate,min_w,max_w", [(0.5, 2, 3), (0.15, 1, 10)])
def test_model_average_window(rate, min_w, max_w):
    main, exe, scope, ma = build(lambda: fluid.optimizer.ModelAverage(rate, min_w, max_w))
    ws = []
    with fluid.scope_guard(scope):
        for _ in range(7):
            exe.run(main, feed={"x": X, "y": Y})
            ws.append(w_of(scope).astype("float64"))
            with ma.apply(exe):
                np.testing.assert_allclose(
                    w_of(scope),
                    average_accumulates_ref(ws, rate, min_w, max_w),
                    rtol=1e-5,
                    atol=1e-6,
                )
            np.testing.assert_array_equal(w_of(scope), ws[-1])


def test_model_average_bad_windows():
    with pytest.raises(ValueError, match="min_average_window"):
        fluid.optimizer.ModelAverage(0.1, min_average_window=10, max_average_window=5)
    with pytest.raises(TypeError, match="thres_steps"):
        fluid.optimizer.ExponentialMovingAverage(0.9, thres_steps=3)
