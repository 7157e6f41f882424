"""fluid.layers.distributions against Fluid 1.8.5's numbers (same parameters and values)."""

import numpy as np
import pytest
from oar import fluid
from oar.errors import OarError
from oar.layers import distributions as D


def _run(build):
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        outs = build()
    return fluid.Executor(fluid.CPUPlace()).run(main, fetch_list=outs, scope=fluid.Scope())


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")  # log(0) = -inf, as Fluid
def test_match_fluid18():
    def build():
        L = fluid.layers
        n1 = D.Normal(np.array([0.5, 1.0], "float32"), np.array([1.5, 0.7], "float32"))
        n2 = D.Normal(0.2, 1.1)
        v = L.assign(np.array([0.3, -0.4], "float32"))
        other = D.Normal(np.array([0.1, 0.2], "float32"), np.array([1.0, 2.0], "float32"))
        u = D.Uniform(np.array([0.0, 1.0], "float32"), np.array([2.0, 1.5], "float32"))
        c1 = D.Categorical(L.assign(np.array([[0.1, 0.5, -0.3], [1.0, 0.0, 2.0]], "float32")))
        c2 = D.Categorical(L.assign(np.array([[0.3, -0.5, 0.2], [0.0, 0.4, 1.0]], "float32")))
        m1 = D.MultivariateNormalDiag(
            L.assign(np.array([0.3, 0.8], "float32")),
            L.assign(np.array([[0.4, 0.0], [0.0, 1.3]], "float32")),
        )
        m2 = D.MultivariateNormalDiag(
            L.assign(np.array([0.1, 0.2], "float32")),
            L.assign(np.array([[1.4, 0.0], [0.0, 0.5]], "float32")),
        )
        return [
            n1.entropy(),
            n1.log_prob(v),
            n1.kl_divergence(other),
            n2.entropy(),
            u.entropy(),
            u.log_prob(L.assign(np.array([1.0, 1.6], "float32"))),
            c1.entropy(),
            c1.kl_divergence(c2),
            m1.entropy(),
            m1.kl_divergence(m2),
        ]

    # Fluid 1.8.5's outputs for the same calls
    want = [
        [1.824404, 1.062264],
        [-1.333292, -2.562264],
        [0.299535, 0.691072],
        [1.514249],
        [0.693147, -0.693147],
        [-0.693147, -np.inf],
        [[1.047333], [0.832396]],
        [[0.207473], [0.116952]],
        [2.510914],
        [0.965769],
    ]
    for got, w in zip(_run(build), want):
        np.testing.assert_allclose(got, w, rtol=1e-5, atol=1e-6)


def test_samples_have_the_right_shape_and_moments():
    def build():
        n = D.Normal(np.array([0.5, -1.0], "float32"), np.array([1.5, 0.2], "float32"))
        u = D.Uniform(np.array([0.0, 1.0], "float32"), np.array([2.0, 1.5], "float32"))
        return [n.sample([4000], seed=3), u.sample([4000], seed=4)]

    ns, us = _run(build)
    assert ns.shape == (4000, 2) and us.shape == (4000, 2)
    np.testing.assert_allclose(ns.mean(0), [0.5, -1.0], atol=0.08)
    np.testing.assert_allclose(ns.std(0), [1.5, 0.2], rtol=0.05)
    assert (
        (us[:, 0] >= 0).all()
        and (us[:, 0] < 2).all()
        and (us[:, 1] >= 1).all()
        and (us[:, 1] < 1.5).all()
    )
    assert fluid.layers.Normal is D.Normal and fluid.layers.distributions is D


def test_bad_arguments_are_refused():
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        with pytest.raises(OarError, match="loc"):
            D.Normal("a", 1.0)
        with pytest.raises(OarError, match="kl_divergence"):
            D.Normal(0.0, 1.0).kl_divergence(D.Uniform(0.0, 1.0))
        with pytest.raises(OarError, match="shape"):
            D.Normal(0.0, 1.0).sample(3)
        with pytest.raises(OarError, match=r"\[k, k\]"):
            D.MultivariateNormalDiag([0.0, 1.0], [1.0, 2.0])
