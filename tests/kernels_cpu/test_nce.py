"""nce: fixed negatives against Fluid 1.8.5, numeric gradients, and the samplers' statistics."""

from pathlib import Path

import numpy as np
import pytest
from oar import fluid
from oar.errors import OarError
from oar.testing import OpCase, check_case, run_forward

G = np.load(Path(__file__).parent / "data" / "fluid18_nce.npz")
rng = np.random.default_rng(141)


def _attrs(**kw):
    a = {
        "num_total_classes": 7,
        "num_neg_samples": 3,
        "sampler": 0,
        "seed": 0,
        "is_sparse": False,
        "custom_neg_classes": [0, 2, 5],
    }
    a.update(kw)
    return a


CASES = [
    OpCase(
        "nce",
        {
            "Input": G["x"].astype("float64"),
            "Label": G["label"],
            "Weight": G["w"].astype("float64"),
            "Bias": G["b"].astype("float64"),
        },
        _attrs(),
        ref=lambda **_: {"Cost": G["cost"]},
        grad=["Input", "Weight", "Bias"],
        grad_outputs=["Cost"],
        rtol=1e-5,
    ),
    OpCase(
        "nce",
        {
            "Input": rng.uniform(-1, 1, (2, 3)),
            "Label": np.array([[1, 3], [0, 2]], "int64"),
            "Weight": rng.uniform(-1, 1, (7, 3)),
            "SampleWeight": np.array([[0.5], [2.0]]),
        },
        _attrs(sampler=1),
        grad=["Input", "Weight"],
        grad_outputs=["Cost"],
        name="log_uniform_weighted",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_nce(case):
    check_case(case)


def test_layer_gradients_match_fluid18():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data("x", [None, 4], "float32")
        x.stop_gradient = False
        lab = fluid.data("l", [None, 1], "int64")
        init = fluid.initializer.NumpyArrayInitializer
        cost = fluid.layers.nce(
            x,
            lab,
            7,
            param_attr=fluid.ParamAttr("w", initializer=init(G["w"])),
            bias_attr=fluid.ParamAttr("b", initializer=init(G["b"])),
            num_neg_samples=3,
        )
        op = [o for o in main.global_block().ops if o.type == "nce"][0]
        op.attrs["custom_neg_classes"] = [0, 2, 5]
        block = main.global_block()
        grads = fluid.gradients(
            [fluid.layers.reduce_sum(cost)], [x, block.var("w"), block.var("b")]
        )
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    got = exe.run(main, feed={"x": G["x"], "l": G["label"]}, fetch_list=[cost] + grads, scope=scope)
    for k, v in zip(("cost", "dx", "dw", "db"), got):
        np.testing.assert_allclose(v, G[k], rtol=1e-4, atol=1e-5, err_msg=k)


@pytest.mark.parametrize(
    "sampler, probs", [(0, None), (1, None), (2, np.array([0.4, 0.3, 0.1, 0.1, 0.05, 0.03, 0.02]))]
)
def test_samplers_draw_from_their_distribution(sampler, probs):
    ins = {
        "Input": np.zeros((4000, 2)),
        "Label": np.zeros((4000, 1), "int64"),
        "Weight": np.zeros((7, 2)),
    }
    if probs is not None:
        ins["CustomDistProbs"] = probs
    out = run_forward(OpCase("nce", ins, _attrs(sampler=sampler, custom_neg_classes=[], seed=9)))
    neg = out["SampleLabels"][0][:, 1:].ravel()
    freq = np.bincount(neg, minlength=7) / neg.size
    want = {
        0: np.full(7, 1 / 7),
        1: np.log((np.arange(7) + 2) / (np.arange(7) + 1)) / np.log(8),
        2: probs,
    }[sampler]
    np.testing.assert_allclose(freq, want, atol=0.02)


def test_bad_input_is_refused():
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        x = fluid.data("x", [None, 4], "float32")
        lab = fluid.data("l", [None, 1], "int64")
        with pytest.raises(OarError, match="num_neg_samples"):
            fluid.layers.nce(x, lab, 5, num_neg_samples=-1)
        with pytest.raises(OarError, match="sampler"):
            fluid.layers.nce(x, lab, 5, sampler="zipf")
        with pytest.raises(OarError, match="custom_dist"):
            fluid.layers.nce(x, lab, 5, sampler="custom_dist", custom_dist=[0.5, 0.5])


def test_more_negatives_than_classes_are_drawn_with_replacement():
    # Fluid 1.8.5 accepts num_neg_samples >= num_total_classes (default 10 with 3 classes)
    # and num_neg_samples=0 (a zero cost)
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data("x", [None, 4], "float32")
        lab = fluid.data("l", [None, 1], "int64")
        many = fluid.layers.nce(x, lab, 3, seed=1)
        none = fluid.layers.nce(x, lab, 3, num_neg_samples=0)
        ops = [o for o in main.global_block().ops if o.type == "nce"]
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    feed = {"x": np.linspace(-1, 1, 8).reshape(2, 4).astype("float32"), "l": np.array([[0], [2]])}
    got = exe.run(
        main,
        feed=feed,
        fetch_list=[many, none, ops[0].output("SampleLabels")[0]],
        scope=scope,
    )
    assert np.isfinite(got[0]).all() and (got[0] > 0).all()
    np.testing.assert_array_equal(got[1], np.zeros((2, 1), "float32"))
    assert got[2].shape == (2, 11) and set(np.unique(got[2][:, 1:])) <= {0, 1, 2}
