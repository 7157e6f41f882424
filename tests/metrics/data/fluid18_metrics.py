"""Golden data for fluid.metrics: run with the Fluid 1.8.5 oracle.

    $FLUID18_PYTHON tests/metrics/data/fluid18_metrics.py

Writes tests/metrics/data/fluid18_metrics.json: the inputs of each update and the
values eval() gave in Fluid 1.8.5.
"""

import json
import os

import numpy as np
import paddle.fluid as fluid

rng = np.random.RandomState(3)
out = {}

batches = []
for _ in range(3):
    preds = rng.uniform(0, 1, (20, 1))
    labels = rng.randint(0, 2, (20, 1))
    batches.append((preds.tolist(), labels.tolist()))
prec, rec = fluid.metrics.Precision(), fluid.metrics.Recall()
comp = fluid.metrics.CompositeMetric()
comp.add_metric(fluid.metrics.Precision())
comp.add_metric(fluid.metrics.Recall())
for p, lab in batches:
    prec.update(np.array(p), np.array(lab))
    rec.update(np.array(p), np.array(lab))
    comp.update(np.array(p), np.array(lab))
out["binary"] = {
    "batches": batches,
    "precision": prec.eval(),
    "recall": rec.eval(),
    "composite": comp.eval(),
}

acc = fluid.metrics.Accuracy()
accs = [(0.5, 10), (0.75, 20), (0.25, 4)]
for v, w in accs:
    acc.update(v, w)
out["accuracy"] = {"updates": accs, "value": float(acc.eval())}

for nt in (4095, 200):
    auc = fluid.metrics.Auc("auc", num_thresholds=nt)
    aucb = []
    for _ in range(3):
        p1 = rng.uniform(0, 1, 30)
        lab = (rng.uniform(0, 1, 30) < p1).astype("int64")
        preds = np.stack([1 - p1, p1], 1)
        auc.update(preds, lab.reshape(-1, 1))
        aucb.append((preds.tolist(), lab.tolist()))
    out[f"auc_{nt}"] = {"batches": aucb, "value": float(auc.eval())}

ch = fluid.metrics.ChunkEvaluator()
chunks = [(10, 12, 7), (5, 3, 2)]
for c in chunks:
    ch.update(*c)
out["chunk"] = {"updates": chunks, "value": list(ch.eval())}

ed = fluid.metrics.EditDistance("ed")
eds = [([0.0, 2.0, 1.0, 0.0], 4), ([3.0, 0.0], 2)]
for d, n in eds:
    ed.update(np.array(d).reshape(-1, 1), np.array([n]))
out["edit"] = {"updates": eds, "value": [float(v) for v in ed.eval()]}

path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fluid18_metrics.json")
with open(path, "w") as f:
    json.dump(out, f)
