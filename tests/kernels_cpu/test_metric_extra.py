"""auc (cumulative and sliding window) and mean_iou against Fluid 1.8.5 and hand counts."""

from pathlib import Path

import numpy as np
import pytest
from oar import fluid
from oar.errors import OarError
from oar.metrics import Auc
from oar.testing import OpCase, check_case

PRED = np.array([[0, 1, 2, 2], [1, 1, 0, 2]], "int32")
LAB = np.array([[0, 2, 2, 1], [1, 1, 1, 2]], "int32")
P1 = np.array([0.1, 0.4, 0.35, 0.8, 0.65, 0.2])


def _auc_case(steps, name):
    nt = 10
    shape = [1, nt + 1] if steps == 0 else [(steps + 1) * (nt + 1) + 1]
    return OpCase(
        "auc",
        {
            "Predict": np.stack([1 - P1, P1], 1),
            "Label": np.array([[0], [0], [1], [1], [1], [0]], "int64"),
            "StatPos": np.zeros(shape, "int64"),
            "StatNeg": np.zeros(shape, "int64"),
        },
        {"curve": "ROC", "num_thresholds": nt, "slide_steps": steps},
        # positives at buckets 3, 8, 6; negatives at 1, 4, 2: one misordered pair of nine
        ref=lambda **_: {"AUC": np.array([8 / 9])},
        name=name,
    )


CASES = [
    OpCase(
        "mean_iou",
        {"Predictions": PRED, "Labels": LAB},
        {"num_classes": 4},
        # Fluid 1.8.5's outputs for the same call
        ref=lambda **_: {
            "OutMeanIou": np.array([0.46666667], "float32"),
            "OutWrong": np.array([1, 3, 2, 0], "int32"),
            "OutCorrect": np.array([1, 2, 2, 0], "int32"),
        },
    ),
    _auc_case(0, "cumulative"),
    _auc_case(2, "window"),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_metric_extra(case):
    check_case(case)


def test_layers_auc_matches_fluid18_and_the_metric_class():
    # Fluid 1.8.5, num_thresholds=200, slide_steps=2, the same four batches:
    # (auc, batch_auc) after each batch
    want = [
        (0.58333333, 0.58333333),
        (0.74545455, 0.74545455),
        (0.86428571, 0.9375),
        (0.88492063, 0.98412698),
    ]
    rng = np.random.RandomState(5)
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        p = fluid.data("p", [None, 2], "float32")
        lab = fluid.data("l", [None, 1], "int64")
        auc, batch_auc, states = fluid.layers.auc(p, lab, num_thresholds=200, slide_steps=2)
        assert [list(s.shape) for s in states] == [[604], [604], [1, 201], [1, 201]]
        assert all(s.persistable for s in states)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    metric = Auc("auc", num_thresholds=200)
    for a_want, b_want in want:
        p1 = rng.rand(8).astype("float32")
        pr = np.stack([1 - p1, p1], 1)
        lb = (rng.rand(8) < p1).astype("int64").reshape(-1, 1)
        rng.randint(0, 3, (2, 4)), rng.randint(0, 3, (2, 4))  # the oracle run drew these too
        a, b = exe.run(main, feed={"p": pr, "l": lb}, fetch_list=[auc, batch_auc], scope=scope)
        metric.update(pr, lb)
        assert float(a[0]) == pytest.approx(a_want, rel=1e-6)
        assert float(b[0]) == pytest.approx(b_want, rel=1e-6)
        assert metric.eval() == pytest.approx(a_want, rel=1e-6)


def test_mean_iou_layer_and_bad_input():
    with fluid.dygraph.guard():
        v = fluid.dygraph.to_variable
        m, w, c = fluid.layers.mean_iou(v(PRED), v(LAB), 4)
        assert m.numpy()[0] == pytest.approx(0.46666667)
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        x = fluid.data("x", [None, 2], "float32")
        lab = fluid.data("lab", [None, 1], "int64")
        with pytest.raises(OarError, match="num_classes"):
            fluid.layers.mean_iou(lab, lab, 0)
        with pytest.raises(OarError, match="slide_steps"):
            fluid.layers.auc(x, lab, slide_steps=-1)
        with pytest.raises(OarError, match="curve"):
            fluid.layers.auc(x, lab, curve="DET")
    with pytest.raises(OarError, match="curve"):
        Auc("a", curve="roc")


AUC_PR = np.load(Path(__file__).parent / "data" / "fluid18_auc_pr.npz")


@pytest.mark.parametrize("curve", ["ROC", "PR"])
def test_auc_curves_match_fluid18(curve):
    """Fluid 1.8.5 computes the same area for curve="PR" as for "ROC"; so does oar."""
    pred, label = AUC_PR["pred"], AUC_PR["label"]
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data("x", [None, 2], "float32")
        lab = fluid.data("l", [None, 1], "int64")
        a, ba, _ = fluid.layers.auc(x, lab, curve=curve, num_thresholds=15, slide_steps=2)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    got = []
    for i in range(3):
        feed = {"x": pred[i * 10 : (i + 1) * 10], "l": label[i * 10 : (i + 1) * 10]}
        got.append([float(v[0]) for v in exe.run(main, feed=feed, fetch_list=[a, ba], scope=scope)])
    np.testing.assert_allclose(got, AUC_PR[curve + "_auc"], rtol=1e-9)
    metric = Auc("m", curve=curve, num_thresholds=15)
    metric.update(pred, label)
    assert metric.eval() == pytest.approx(float(AUC_PR[curve + "_metric"]), rel=1e-9)
