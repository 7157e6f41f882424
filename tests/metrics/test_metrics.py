"""fluid.metrics against Fluid 1.8.5 (golden data) and hand-computed values."""

import json
from pathlib import Path

import numpy as np
import pytest
from oar import fluid
from oar.errors import ArgumentError, ArgumentTypeError

GOLDEN = json.loads((Path(__file__).parent / "data" / "fluid18_metrics.json").read_text())
M = fluid.metrics


def test_precision_recall_composite_match_fluid():
    g = GOLDEN["binary"]
    prec, rec, comp = M.Precision(), M.Recall(), M.CompositeMetric()
    comp.add_metric(M.Precision())
    comp.add_metric(M.Recall())
    for p, lab in g["batches"]:
        for m in (prec, rec, comp):
            m.update(np.array(p), np.array(lab))
    assert prec.eval() == pytest.approx(g["precision"])
    assert rec.eval() == pytest.approx(g["recall"])
    assert comp.eval() == pytest.approx(g["composite"])


def test_precision_by_hand_and_reset():
    p = M.Precision("p")
    p.update(np.array([[0.9], [0.2], [0.6], [0.7]]), np.array([[1], [1], [0], [1]]))
    assert (p.tp, p.fp) == (2, 1)
    assert p.eval() == pytest.approx(2 / 3)
    assert p.get_config() == {"name": "p", "states": {"tp": 2, "fp": 1}}
    p.reset()
    assert (p.tp, p.fp, p.eval()) == (0, 0, 0.0)
    r = M.Recall()
    r.update(np.array([0.9, 0.2, 0.6, 0.7]), np.array([1, 1, 0, 1]))
    assert r.eval() == pytest.approx(2 / 3)


def test_accuracy_matches_fluid_and_refuses_empty():
    g = GOLDEN["accuracy"]
    acc = M.Accuracy()
    for v, w in g["updates"]:
        acc.update(v, w)
    assert acc.eval() == pytest.approx(g["value"])
    acc.reset()
    with pytest.raises(ArgumentError, match="no data"):
        acc.eval()
    with pytest.raises(ArgumentTypeError, match="Accuracy"):
        acc.update("0.5", 1)


@pytest.mark.parametrize("nt", [4095, 200])
def test_auc_matches_fluid(nt):
    g = GOLDEN[f"auc_{nt}"]
    auc = M.Auc("auc", num_thresholds=nt)
    for p, lab in g["batches"]:
        auc.update(np.array(p), np.array(lab).reshape(-1, 1))
    assert auc.eval() == pytest.approx(g["value"], rel=1e-12)
    auc.reset()
    assert auc.eval() == 0.0


def test_auc_by_hand():
    auc = M.Auc("a", num_thresholds=10)
    p = np.array([0.1, 0.4, 0.35, 0.8])
    auc.update(np.stack([1 - p, p], 1), np.array([0, 0, 1, 1]))
    assert auc.eval() == pytest.approx(0.75)  # one of the four pos/neg pairs is misordered
    with pytest.raises(ArgumentError, match=r"\[N, 2\]"):
        auc.update(p, np.array([0, 0, 1, 1]))


def test_chunk_and_edit_distance_match_fluid():
    ch = M.ChunkEvaluator()
    for c in GOLDEN["chunk"]["updates"]:
        ch.update(*c)
    assert list(ch.eval()) == pytest.approx(GOLDEN["chunk"]["value"])
    ed = M.EditDistance("ed")
    for d, n in GOLDEN["edit"]["updates"]:
        ed.update(np.array(d).reshape(-1, 1), np.array([n]))
    assert list(ed.eval()) == pytest.approx(GOLDEN["edit"]["value"])
    ed.reset()
    with pytest.raises(ArgumentError, match="no data"):
        ed.eval()


def test_composite_refuses_non_metric_and_base_is_abstract():
    with pytest.raises(ArgumentTypeError, match="MetricBase"):
        M.CompositeMetric().add_metric(object())
    with pytest.raises(NotImplementedError):
        M.MetricBase("x").update(None, None)
    assert str(M.MetricBase("x")) == "x"
    assert sorted(M.__all__) == sorted(
        [
            "MetricBase",
            "CompositeMetric",
            "Precision",
            "Recall",
            "Accuracy",
            "ChunkEvaluator",
            "EditDistance",
            "Auc",
        ]
        + (["DetectionMAP"] if "DetectionMAP" in M.__all__ else [])
    )
