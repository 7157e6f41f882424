"""Dygraph Conv3D/Conv3DTranspose/GroupNorm/InstanceNorm, the loss layers, the epoch LR
schedules and the top-level fluid.<Layer> exports, against PyTorch and Fluid 1.8.5's numbers."""

import numpy as np
import pytest
from oar import fluid
from oar.errors import OarError

torch = pytest.importorskip("torch")
F = torch.nn.functional
D = fluid.dygraph
rng = np.random.default_rng(51)

X = np.array([[0.2, 0.7, 0.1], [0.9, 0.5, 0.3]], "float32")
LAB = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 1.0]], "float32")
LP = np.log(np.array([[0.2, 0.5, 0.3], [0.1, 0.1, 0.8], [0.6, 0.3, 0.1]], "float32"))
NL = np.array([1, 2, -100], "int64")
# Fluid 1.8.5's outputs for the same calls
FLUID18 = {
    ("bce", "mean"): [0.4479433000087738],
    ("bce", "sum"): [2.687659740447998],
    ("bcew", "sum"): [6.356148719787598],
    ("l1", "mean"): [0.31666669249534607],
    ("l1", "sum"): [1.9000000953674316],
    ("mse", "mean"): [0.1483333259820938],
    ("mse", "sum"): [0.8899999856948853],
    ("nll", "mean"): [0.4581453502178192],
    ("nll", "sum"): [0.9162907004356384],
    ("nll", "none"): [0.6931471824645996, 0.2231435328722, 0.0],
    ("nllw", "mean"): [0.5991464853286743],
    ("nllw", "none"): [1.3862943649291992, 0.1115717664361, 0.0],
}


def _loss(kind, red):
    v = D.to_variable
    if kind == "bce":
        return D.BCELoss(reduction=red)(v(X), v(LAB))
    if kind == "bcew":
        return D.BCELoss(weight=v(np.array([1.0, 2.0, 3.0], "float32")), reduction=red)(
            v(X), v(LAB)
        )
    if kind == "l1":
        return D.L1Loss(reduction=red)(v(X), v(LAB))
    if kind == "mse":
        return D.MSELoss(reduction=red)(v(X), v(LAB))
    if kind == "nll":
        return D.NLLLoss(reduction=red)(v(LP), v(NL))
    return D.NLLLoss(weight=v(np.array([1.0, 2.0, 0.5], "float32")), reduction=red)(v(LP), v(NL))


@pytest.mark.parametrize("key", sorted(FLUID18), ids=lambda k: "-".join(k))
def test_losses_match_fluid18(key):
    with D.guard():
        got = _loss(*key).numpy().reshape(-1)
    np.testing.assert_allclose(got, FLUID18[key], rtol=1e-5, atol=1e-7)


def test_nll_4d_and_gradient_against_torch():
    lp = (
        np.log(rng.dirichlet([1, 1, 1], size=(2, 2, 2)).astype("float32"))
        .transpose(0, 3, 1, 2)
        .copy()
    )
    lab = np.array([[[0, 1], [2, 1]], [[1, 1], [0, 2]]], "int64")
    with D.guard():
        x = D.to_variable(lp)
        x.stop_gradient = False
        loss = D.NLLLoss()(x, D.to_variable(lab))
        loss.backward()
        g = x.gradient()
    t = torch.tensor(lp, requires_grad=True)
    want = F.nll_loss(t, torch.tensor(lab))
    want.backward()
    np.testing.assert_allclose(loss.numpy().reshape(()), want.item(), rtol=1e-5)
    np.testing.assert_allclose(g, t.grad.numpy(), rtol=1e-5, atol=1e-7)


def test_conv3d_groupnorm_instancenorm_layers_against_torch():
    x = rng.uniform(-1, 1, (2, 4, 3, 4, 5)).astype("float32")
    with D.guard():
        conv = D.Conv3D(4, 6, 3, padding=1, groups=2, act="relu")
        convt = D.Conv3DTranspose(6, 2, 2, stride=2)
        gn = D.GroupNorm(6, 3)
        inn = D.InstanceNorm(6)
        h = conv(D.to_variable(x))
        gn_out, in_out = gn(h), inn(h)
        up = convt(h)
        w, b = conv.weight.numpy(), conv.bias.numpy()
        wt, bt = convt.weight.numpy(), convt.bias.numpy()
        assert fluid.Conv3D is D.Conv3D and fluid.GroupNorm is D.GroupNorm
        # as in Fluid 1.8.5, GroupNorm has no weight/bias unless param_attr/bias_attr is given
        assert len(conv.parameters()) == 2 and len(gn.parameters()) == 0
        assert [p.shape for p in D.GroupNorm(6, 3, param_attr=True).parameters()] == [[6]]
    ht = torch.relu(
        F.conv3d(torch.tensor(x), torch.tensor(w), torch.tensor(b), padding=1, groups=2)
    )
    np.testing.assert_allclose(h.numpy(), ht.numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(gn_out.numpy(), F.group_norm(ht, 3).numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(in_out.numpy(), F.instance_norm(ht).numpy(), rtol=1e-4, atol=1e-4)
    want = F.conv_transpose3d(ht, torch.tensor(wt), torch.tensor(bt), stride=2)
    np.testing.assert_allclose(up.numpy(), want.numpy(), rtol=1e-4, atol=1e-4)
    assert list(up.shape) == [2, 2, 6, 8, 10]


def test_epoch_schedules_match_fluid18():
    # Fluid 1.8.5: the rate, then epoch(), six times
    want = {
        "StepDecay": [0.5, 0.5, 0.5, 0.05, 0.05, 0.05],
        "MultiStepDecay": [0.5, 0.5, 0.05, 0.05, 0.005, 0.005],
        "LambdaDecay": [0.5, 0.45, 0.405, 0.3645, 0.32805, 0.295245],
    }
    for s in (
        D.StepDecay(0.5, 3),
        D.MultiStepDecay(0.5, [2, 4]),
        D.LambdaDecay(0.5, lambda e: 0.9**e),
    ):
        got = []
        for _ in range(6):
            got.append(s())
            s.epoch()
        np.testing.assert_allclose(got, want[type(s).__name__], rtol=1e-6)
    s = D.StepDecay(0.5, 3)
    s.epoch(7)
    assert s() == pytest.approx(0.005)
    assert s.state_dict() == {"epoch_num": 7, "learning_rate": pytest.approx(0.005)}
    with D.guard():
        lin = D.Linear(2, 2)
        opt = fluid.optimizer.SGD(
            learning_rate=D.StepDecay(0.5, 1), parameter_list=lin.parameters()
        )
        assert opt.current_step_lr() == pytest.approx(0.5)
        loss = fluid.layers.reduce_mean(lin(D.to_variable(np.ones((1, 2), "float32"))))
        loss.backward()
        opt.minimize(loss)
        assert opt.current_step_lr() == pytest.approx(
            0.5
        )  # minimize does not advance an epoch schedule


@pytest.mark.parametrize(
    "build, match",
    [
        (lambda: D.StepDecay(0.5, 3, decay_rate=1.0), "decay_rate"),
        (lambda: D.StepDecay(0.5, 1.5), "step_size"),
        (lambda: D.MultiStepDecay(0.5, [4, 2]), "increase"),
        (lambda: D.LambdaDecay(0.5, 3), "function"),
        (lambda: D.L1Loss(reduction="avg"), "reduction"),
        (lambda: D.GroupNorm(6, 7), "must not exceed"),
        (lambda: D.Conv3D(3, 4, [3, 3]), "3 ints"),
    ],
)
def test_bad_arguments_are_refused(build, match):
    with D.guard():
        with pytest.raises(OarError, match=match):
            build()


def test_fluid_top_level_exports_match_fluid18():
    names = [
        "BCELoss",
        "BatchNorm",
        "Conv2D",
        "Conv2DTranspose",
        "Conv3D",
        "Conv3DTranspose",
        "Dropout",
        "Embedding",
        "GRUUnit",
        "GroupNorm",
        "InstanceNorm",
        "L1Loss",
        "Layer",
        "LayerNorm",
        "Linear",
        "MSELoss",
        "NLLLoss",
        "PRelu",
        "Pool2D",
        "BilinearTensorProduct",
        "SpectralNorm",
        "NCE",
        "TreeConv",
    ]
    for n in names:
        assert getattr(fluid, n) is getattr(D, n), n


def test_bilinear_tensor_product_and_spectral_norm_layers():
    x, y = (
        rng.uniform(-1, 1, (3, 2)).astype("float32"),
        rng.uniform(-1, 1, (3, 4)).astype("float32"),
    )
    w = rng.uniform(0, 1, (4, 6)).astype("float32")
    with D.guard():
        btp = D.BilinearTensorProduct(2, 4, 5, act="tanh")
        out = btp(D.to_variable(x), D.to_variable(y))
        wt, b = btp.weight.numpy(), btp.bias.numpy()
        sn = D.SpectralNorm([4, 6], dim=0, power_iters=30)
        got = sn(D.to_variable(w)).numpy()
        assert len(sn.parameters()) == 2 and len(btp.parameters()) == 2
    want = np.tanh(np.einsum("ni,kij,nj->nk", x, wt, y) + b)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got, w / np.linalg.svd(w, compute_uv=False)[0], rtol=1e-4)


def test_nce_layer_trains_and_matches_the_static_op():
    x = rng.uniform(-1, 1, (6, 4)).astype("float32")
    lab = rng.integers(0, 9, (6, 1)).astype("int64")
    with D.guard():
        nce = D.NCE(9, 4, num_neg_samples=3, seed=5)
        opt = fluid.optimizer.SGD(0.5, parameter_list=nce.parameters())
        losses = []
        for _ in range(15):
            cost = fluid.layers.reduce_mean(nce(D.to_variable(x), D.to_variable(lab)))
            cost.backward()
            opt.minimize(cost)
            nce.clear_gradients()
            losses.append(float(cost.numpy()[0]))
        assert nce.weight.shape == [9, 4] and nce.bias is None
    assert losses[-1] < losses[0]
    assert fluid.NCE is D.NCE
    with pytest.raises(OarError, match="num_neg_samples"):
        D.NCE(4, 2, num_neg_samples=-4)
