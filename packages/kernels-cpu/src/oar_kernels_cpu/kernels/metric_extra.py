"""auc (cumulative or sliding-window bucket counts) and mean_iou."""

from __future__ import annotations

from oar_kernels_cpu.kernels import FLOATS, array_module, kernel

xp = array_module(__name__)


def _auc_of(pos, neg):
    """Area under the ROC curve from bucket counts (highest threshold first), trapezoids."""
    p = xp.cumsum(pos[::-1].astype("float64"))
    n = xp.cumsum(neg[::-1].astype("float64"))
    if float(p[-1]) <= 0 or float(n[-1]) <= 0:
        return 0.0
    pp = xp.concatenate([xp.zeros(1), p[:-1]])
    pn = xp.concatenate([xp.zeros(1), n[:-1]])
    return float(xp.sum((n - pn) * (p + pp) / 2.0) / p[-1] / n[-1])


def _update(stat, batch, steps, nb):
    """Fold this batch's bucket counts into the buffer; returns (new buffer, counts to use)."""
    out = stat.copy()
    if steps == 0:
        out[0] += batch
        return out, out[0]
    rows = out[:-1].reshape(steps + 1, nb)
    slot = int(out[-1]) % steps
    rows[steps] -= rows[slot]
    rows[slot] = batch
    rows[steps] += batch
    out[-1] += 1
    return out, rows[steps]


@kernel("auc", FLOATS)
def auc(inputs, attrs):
    p, lab = inputs["Predict"], inputs["Label"].reshape(-1)
    nt, steps = attrs["num_thresholds"], attrs["slide_steps"]
    nb = nt + 1
    bins = xp.clip((p[:, -1] * nt).astype("int64"), 0, nt)
    positive = lab > 0
    bpos = xp.bincount(bins[positive], minlength=nb).astype("int64")
    bneg = xp.bincount(bins[~positive], minlength=nb).astype("int64")
    pos_out, pos = _update(inputs["StatPos"], bpos, steps, nb)
    neg_out, neg = _update(inputs["StatNeg"], bneg, steps, nb)
    return {
        "AUC": xp.asarray([_auc_of(pos, neg)], dtype="float64"),
        "StatPosOut": pos_out,
        "StatNegOut": neg_out,
    }


@kernel("mean_iou", ("int32", "int64"))
def mean_iou(inputs, attrs):
    c = attrs["num_classes"]
    p = inputs["Predictions"].reshape(-1).astype("int64")
    lab = inputs["Labels"].reshape(-1).astype("int64")
    hit = p == lab
    correct = xp.bincount(p[hit], minlength=c)[:c]
    wrong = xp.bincount(p[~hit], minlength=c)[:c] + xp.bincount(lab[~hit], minlength=c)[:c]
    for w in inputs.get("InWrongs") or []:
        wrong = wrong + w.reshape(-1)[:c]
    for r in inputs.get("InCorrects") or []:
        correct = correct + r.reshape(-1)[:c]
    denom = correct + wrong
    valid = denom > 0
    iou = xp.where(valid, correct / xp.maximum(denom, 1), 0.0)
    n_valid = int(valid.sum())
    miou = float(iou.sum()) / n_valid if n_valid else 0.0
    for m in inputs.get("InMeanIou") or []:
        miou += float(m.reshape(-1)[0])
    return {
        "OutMeanIou": xp.asarray([miou], dtype="float32"),
        "OutWrong": wrong.astype("int32"),
        "OutCorrect": correct.astype("int32"),
    }
