"""sample_logits / sampled_softmax_with_cross_entropy: Fluid 1.8.5 with customized samples,
numeric gradients and the log-uniform sampler."""

from pathlib import Path

import numpy as np
import pytest
from oar import fluid
from oar.errors import OarError
from oar.testing import OpCase, check_case, run_forward

G = np.load(Path(__file__).parent / "data" / "fluid18_sample_logits.npz")


def _ref(Logits, Labels, CustomizedSamples, CustomizedProbabilities, remove_accidental_hits, **_):
    s = Logits[np.arange(3)[:, None], CustomizedSamples] - np.log(CustomizedProbabilities)
    if remove_accidental_hits:
        s[:, 1:][CustomizedSamples[:, 1:] == Labels] -= 1e20
    return {"SampledLogits": s}


INPUTS = {
    "Logits": G["logits"].astype("float64"),
    "Labels": G["label"],
    "CustomizedSamples": G["samples"],
    "CustomizedProbabilities": G["probs"].astype("float64"),
}


def _attrs(hits):
    return {
        "num_samples": 3,
        "use_customized_samples": True,
        "uniq": True,
        "remove_accidental_hits": hits,
        "seed": 0,
    }


CASES = [
    OpCase("sample_logits", INPUTS, _attrs(True), ref=_ref, name="hits_removed"),
    # -1e20 swamps finite differences: the gradient check runs without removed hits
    OpCase(
        "sample_logits",
        INPUTS,
        _attrs(False),
        ref=_ref,
        grad=["Logits"],
        grad_outputs=["SampledLogits"],
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_sample_logits(case):
    check_case(case)


def test_layer_matches_fluid18():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        lg = fluid.data("lg", [None, 8], "float32")
        lg.stop_gradient = False
        lab = fluid.data("l", [None, 1], "int64")
        s = fluid.data("s", [None, 4], "int64")
        p = fluid.data("p", [None, 4], "float32")
        loss = fluid.layers.sampled_softmax_with_cross_entropy(
            lg,
            lab,
            3,
            use_customized_samples=True,
            customized_samples=s,
            customized_probabilities=p,
        )
        (g,) = fluid.gradients([fluid.layers.reduce_sum(loss)], [lg])
    feed = {"lg": G["logits"], "l": G["label"], "s": G["samples"], "p": G["probs"]}
    got_loss, got_g = fluid.Executor(fluid.CPUPlace()).run(
        main, feed=feed, fetch_list=[loss, g], scope=fluid.Scope()
    )
    np.testing.assert_allclose(got_loss, G["loss"], rtol=1e-5)
    np.testing.assert_allclose(got_g, G["dlogits"], rtol=1e-4, atol=1e-5)


def test_log_uniform_samples_are_distinct_and_shared():
    case = OpCase(
        "sample_logits",
        {"Logits": np.zeros((4, 50)), "Labels": np.array([[1], [2], [3], [4]], "int64")},
        {
            "num_samples": 10,
            "use_customized_samples": False,
            "uniq": True,
            "remove_accidental_hits": True,
            "seed": 3,
        },
    )
    out = run_forward(case)
    samples, probs = out["Samples"][0], out["Probabilities"][0]
    assert samples.shape == (4, 11) and (samples[:, 0] == [1, 2, 3, 4]).all()
    assert len(set(samples[0, 1:])) == 10 and (samples[:, 1:] == samples[0, 1:]).all()
    assert ((probs > 0) & (probs <= 1)).all()
    # small ids are the likely ones under the log-uniform distribution
    assert np.median(samples[0, 1:]) < 25


def test_bad_input_is_refused():
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        lg = fluid.data("lg", [None, 8], "float32")
        lab = fluid.data("l", [None, 1], "int64")
        with pytest.raises(OarError, match="num_samples"):
            fluid.layers.sampled_softmax_with_cross_entropy(lg, lab, 0)
        with pytest.raises(OarError, match="customized"):
            fluid.layers.sampled_softmax_with_cross_entropy(lg, lab, 2, use_customized_samples=True)
