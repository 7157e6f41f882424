"""Differential check of the loss ops (values and gradients) against PyTorch CPU."""

import numpy as np
import pytest
from oar import fluid

try:  # the oracle is optional: without it every test here is reported skipped, one by one
    import torch

    F = torch.nn.functional
except ImportError:
    torch = F = None
pytestmark = pytest.mark.skipif(
    torch is None, reason="PyTorch CPU oracle not installed: pip install torch==2.13.0"
)
L = fluid.layers
rng = np.random.default_rng(7)


def _run(build, feeds, wrt):
    """Build a loss with oar, return (loss value, d mean(loss) / d wrt) as numpy."""
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        vars_ = {
            k: L.data(k, list(v.shape), dtype=v.dtype.name, append_batch_size=False)
            for k, v in feeds.items()
        }
        vars_[wrt].stop_gradient = False
        out = build(vars_)
        total = L.reduce_sum(out)
        (g,) = fluid.gradients([total], [vars_[wrt]])
    return fluid.Executor(fluid.CPUPlace()).run(main, feed=feeds, fetch_list=[out, g])


def _torch(fn, x, *rest):
    t = torch.tensor(x, requires_grad=True)
    out = fn(t, *[torch.tensor(r) for r in rest])
    out.sum().backward()
    return out.detach().numpy(), t.grad.numpy()


def test_softmax_with_cross_entropy_hard_and_soft():
    x = rng.normal(size=(5, 7)).astype("float32")
    lab = rng.integers(0, 7, (5, 1)).astype("int64")
    lab[2, 0] = -100
    out, g = _run(lambda v: L.softmax_with_cross_entropy(v["x"], v["l"]), {"x": x, "l": lab}, "x")
    t_out, t_g = _torch(
        lambda t, lab: F.cross_entropy(t, lab, reduction="none", ignore_index=-100), x, lab[:, 0]
    )
    np.testing.assert_allclose(out[:, 0], t_out, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(g, t_g, rtol=1e-5, atol=1e-6)
    soft = rng.dirichlet(np.ones(7), 5).astype("float32")
    out, g = _run(
        lambda v: L.softmax_with_cross_entropy(v["x"], v["l"], soft_label=True),
        {"x": x, "l": soft},
        "x",
    )
    t_out, t_g = _torch(lambda t, lab: F.cross_entropy(t, lab, reduction="none"), x, soft)
    np.testing.assert_allclose(out[:, 0], t_out, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(g, t_g, rtol=1e-5, atol=1e-6)


def test_sigmoid_cross_entropy_with_logits():
    x = (rng.normal(size=(4, 6)) * 4).astype("float32")
    z = rng.uniform(0, 1, (4, 6)).astype("float32")
    out, g = _run(
        lambda v: L.sigmoid_cross_entropy_with_logits(v["x"], v["l"]), {"x": x, "l": z}, "x"
    )
    t_out, t_g = _torch(
        lambda t, lab: F.binary_cross_entropy_with_logits(t, lab, reduction="none"), x, z
    )
    np.testing.assert_allclose(out, t_out, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(g, t_g, rtol=1e-5, atol=1e-6)


def test_huber_and_smooth_l1():
    x = rng.normal(size=(6, 1)).astype("float32") * 2
    y = rng.normal(size=(6, 1)).astype("float32")
    out, g = _run(lambda v: L.huber_loss(v["x"], v["y"], 0.7), {"x": x, "y": y}, "x")
    t_out, t_g = _torch(lambda t, lab: F.huber_loss(t, lab, reduction="none", delta=0.7), x, y)
    np.testing.assert_allclose(out, t_out, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(g, t_g, rtol=1e-5, atol=1e-6)
    x2 = rng.normal(size=(3, 5)).astype("float32") * 2
    y2 = rng.normal(size=(3, 5)).astype("float32")
    sigma = 1.5
    out, g = _run(lambda v: L.smooth_l1(v["x"], v["y"], sigma=sigma), {"x": x2, "y": y2}, "x")
    # Fluid's sigma is torch's beta = 1 / sigma^2: 0.5 sigma^2 d^2 inside, |d| - 0.5 / sigma^2 outside
    t_out, t_g = _torch(
        lambda t, lab: F.smooth_l1_loss(t, lab, reduction="none", beta=1 / sigma**2).sum(
            1, keepdim=True
        ),
        x2,
        y2,
    )
    np.testing.assert_allclose(out, t_out, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(g, t_g, rtol=1e-5, atol=1e-6)


@pytest.mark.filterwarnings("ignore:reduction")
def test_kldiv_and_mse():
    x = np.log(rng.dirichlet(np.ones(5), 4)).astype("float32")
    t = rng.dirichlet(np.ones(5), 4).astype("float32")
    for red in ("none", "sum", "mean", "batchmean"):
        out, g = _run(
            lambda v, red=red: L.kldiv_loss(v["x"], v["t"], reduction=red), {"x": x, "t": t}, "x"
        )
        t_out, t_g = _torch(lambda a, b, red=red: F.kl_div(a, b, reduction=red), x, t)
        np.testing.assert_allclose(
            out.reshape(t_out.shape), t_out, rtol=1e-5, atol=1e-6, err_msg=red
        )
        np.testing.assert_allclose(g, t_g, rtol=1e-5, atol=1e-6, err_msg=red)
    y = rng.normal(size=(4, 5)).astype("float32")
    out, g = _run(lambda v: L.mse_loss(v["x"], v["y"]), {"x": x, "y": y}, "x")
    t_out, t_g = _torch(lambda a, b: F.mse_loss(a, b), x, y)
    np.testing.assert_allclose(out.reshape(()), t_out, rtol=1e-5)
    np.testing.assert_allclose(g, t_g, rtol=1e-5, atol=1e-6)
