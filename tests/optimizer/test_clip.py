"""fluid.clip: by value, by norm, by global norm, as grad_clip=, set_gradient_clip and ParamAttr."""

import warnings

import numpy as np
import pytest
from oar import fluid

rng = np.random.default_rng(13)
W0 = rng.uniform(-1, 1, (3, 2)).astype("float32")
B0 = rng.uniform(-1, 1, (2,)).astype("float32")
X = rng.uniform(-2, 2, (4, 3)).astype("float32")
Y = rng.uniform(-2, 2, (4, 2)).astype("float32")
LR = 0.1


def grads():
    d = 2 * (X @ W0 + B0 - Y) / Y.size
    return X.T @ d, d.sum(0)


def one_step(grad_clip=None, w_clip=None, set_clip=None):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.data("x", [3])
        y = fluid.layers.data("y", [2])
        pred = fluid.layers.fc(
            x,
            2,
            param_attr=fluid.ParamAttr(
                name="w",
                initializer=fluid.initializer.NumpyArrayInitializer(W0),
                gradient_clip=w_clip,
            ),
            bias_attr=fluid.ParamAttr(
                name="b", initializer=fluid.initializer.NumpyArrayInitializer(B0)
            ),
        )
        loss = fluid.layers.mean(fluid.layers.square(pred - y))
        if set_clip is not None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fluid.clip.set_gradient_clip(*set_clip)
        fluid.optimizer.SGD(LR, grad_clip=grad_clip).minimize(loss)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    exe.run(main, feed={"x": X, "y": Y}, scope=scope)
    return (W0 - np.array(scope.find_var("w").value)) / LR, (
        B0 - np.array(scope.find_var("b").value)
    ) / LR


def close(a, b):
    np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)


def test_clip_by_value():
    gw, gb = grads()
    w, b = one_step(fluid.clip.GradientClipByValue(0.2))
    close(w, np.clip(gw, -0.2, 0.2))
    close(b, np.clip(gb, -0.2, 0.2))
    w, _ = one_step(fluid.clip.GradientClipByValue(max=0.3, min=-0.05))
    close(w, np.clip(gw, -0.05, 0.3))


def test_clip_by_norm_is_per_gradient():
    gw, gb = grads()
    w, b = one_step(fluid.clip.GradientClipByNorm(0.1))
    close(w, gw * 0.1 / np.linalg.norm(gw))
    close(b, gb * min(1.0, 0.1 / np.linalg.norm(gb)))


def test_clip_by_global_norm_scales_all_together():
    gw, gb = grads()
    g = np.sqrt(np.sum(gw**2) + np.sum(gb**2))
    assert g > 0.1
    w, b = one_step(fluid.clip.GradientClipByGlobalNorm(0.1))
    close(w, gw * 0.1 / g)
    close(b, gb * 0.1 / g)
    w, b = one_step(fluid.clip.GradientClipByGlobalNorm(1e3))  # below the limit: unchanged
    close(w, gw)
    close(b, gb)


def test_need_clip_leaves_other_gradients_alone():
    gw, gb = grads()
    w, b = one_step(fluid.clip.GradientClipByValue(0.01, need_clip=lambda p: p.name == "b"))
    close(w, gw)
    close(b, np.clip(gb, -0.01, 0.01))


def test_param_attr_and_set_gradient_clip():
    gw, gb = grads()
    w, b = one_step(w_clip=fluid.clip.GradientClipByValue(0.05))
    close(w, np.clip(gw, -0.05, 0.05))
    close(b, gb)
    w, b = one_step(set_clip=(fluid.clip.GradientClipByValue(0.02), ["b"]))
    close(w, gw)
    close(b, np.clip(gb, -0.02, 0.02))
    g = np.sqrt(np.sum(gw**2) + np.sum(gb**2))
    w, b = one_step(
        set_clip=(fluid.clip.GradientClipByGlobalNorm(0.1),)
    )  # one group over all parameters
    close(w, gw * 0.1 / g)
    close(b, gb * 0.1 / g)


def test_optimizer_grad_clip_wins_over_param_clips():
    gw, gb = grads()
    w, b = one_step(
        grad_clip=fluid.clip.GradientClipByValue(0.2), w_clip=fluid.clip.GradientClipByValue(0.01)
    )
    close(w, np.clip(gw, -0.2, 0.2))


def test_bad_clip_arguments():
    with pytest.raises(ValueError, match="clip_norm must be > 0"):
        fluid.clip.GradientClipByNorm(0)
    with pytest.raises(ValueError, match="min .* must not exceed max"):
        fluid.clip.GradientClipByValue(max=0.1, min=0.5)
    with pytest.raises(TypeError, match="set_gradient_clip: clip must be"):
        fluid.clip.set_gradient_clip(0.5)
    assert fluid.clip.ClipByValue is fluid.clip.GradientClipByValue
