"""Loss ops: forward vs numpy references and numeric gradient checks."""

import numpy as np
import pytest
from oar.testing import OpCase, check_case

rng = np.random.default_rng(2)


def r(*shape, low=-1.0, high=1.0):
    return rng.uniform(low, high, shape)


def _log_softmax(x, axis):
    z = x - x.max(axis=axis, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=axis, keepdims=True))


def _swce_ref(Logits, Label, soft_label=False, ignore_index=-100, axis=-1, **_):
    lp = _log_softmax(Logits, axis)
    if soft_label:
        loss = -(Label * lp).sum(axis=axis, keepdims=True)
    else:
        lab = np.where(Label == ignore_index, 0, Label)
        loss = -np.take_along_axis(lp, lab, axis=axis)
        loss[Label == ignore_index] = 0
    return {"Softmax": np.exp(lp), "Loss": loss}


def _sce_ref(X, Label, ignore_index=-100, normalize=False):
    out = np.maximum(X, 0) - X * Label + np.log1p(np.exp(-np.abs(X)))
    keep = Label != ignore_index
    out = np.where(keep, out, 0)
    return {"Out": out / keep.sum() if normalize else out}


def _huber_ref(X, Y, delta):
    rr = Y - X
    return {
        "Residual": rr,
        "Out": np.where(np.abs(rr) <= delta, 0.5 * rr * rr, delta * (np.abs(rr) - 0.5 * delta)),
    }


def _smooth_l1_ref(X, Y, InsideWeight=None, OutsideWeight=None, sigma=1.0):
    d = (X - Y) * (1 if InsideWeight is None else InsideWeight)
    s2 = sigma * sigma
    v = np.where(np.abs(d) < 1 / s2, 0.5 * s2 * d * d, np.abs(d) - 0.5 / s2)
    v = v * (1 if OutsideWeight is None else OutsideWeight)
    return {"Diff": d, "Out": v.reshape(X.shape[0], -1).sum(1, keepdims=True)}


def _bpr_ref(X, Label):
    n = X.shape[1]
    out = np.zeros((X.shape[0], 1))
    for i in range(X.shape[0]):
        lab = Label[i, 0]
        s = sum(np.log(1 / (1 + np.exp(-(X[i, lab] - X[i, j])))) for j in range(n) if j != lab)
        out[i, 0] = -s / (n - 1)
    return {"Y": out}


def _kl_ref(X, Target, reduction="mean"):
    loss = np.where(Target > 0, Target * (np.log(np.where(Target > 0, Target, 1)) - X), 0)
    red = {
        "none": loss,
        "sum": loss.sum(),
        "mean": loss.mean(),
        "batchmean": loss.sum() / X.shape[0],
    }[reduction]
    return {"Loss": np.asarray(red).reshape(loss.shape if reduction == "none" else (1,))}


HARD = np.array([[0], [2], [1]], "int64")
SOFT = rng.dirichlet(np.ones(4), 3)
LOGITS = r(3, 4)
BIN = (rng.uniform(0, 1, (3, 4)) > 0.5).astype("float64")

CASES = [
    OpCase(
        "softmax_with_cross_entropy",
        {"Logits": LOGITS, "Label": HARD},
        ref=_swce_ref,
        grad=["Logits"],
        grad_outputs=["Loss"],
        name="hard",
    ),
    OpCase(
        "softmax_with_cross_entropy",
        {"Logits": LOGITS, "Label": np.array([[0], [-1], [3]], "int64")},
        {"ignore_index": -1},
        ref=_swce_ref,
        grad=["Logits"],
        grad_outputs=["Loss"],
        name="ignore",
    ),
    OpCase(
        "softmax_with_cross_entropy",
        {"Logits": LOGITS, "Label": SOFT},
        {"soft_label": True},
        ref=_swce_ref,
        grad=["Logits"],
        grad_outputs=["Loss"],
        name="soft",
    ),
    OpCase(
        "softmax_with_cross_entropy",
        {"Logits": r(2, 3, 2), "Label": np.array([[[0, 1]], [[2, 2]]], "int64")},
        {"axis": 1},
        ref=_swce_ref,
        grad=["Logits"],
        grad_outputs=["Loss"],
        name="axis1",
    ),
    OpCase(
        "softmax_with_cross_entropy",
        {"Logits": r(3, 4).astype("float32"), "Label": HARD},
        ref=_swce_ref,
        name="float32",
        rtol=1e-5,
        atol=1e-6,
    ),
    OpCase(
        "sigmoid_cross_entropy_with_logits",
        {"X": LOGITS * 3, "Label": BIN},
        ref=_sce_ref,
        grad=["X"],
    ),
    OpCase(
        "sigmoid_cross_entropy_with_logits",
        {"X": LOGITS, "Label": np.where(BIN > 0, 1.0, -1.0) * (rng.uniform(size=(3, 4)) > 0.3)},
        {"ignore_index": -1, "normalize": True},
        ref=_sce_ref,
        grad=["X"],
        name="ignore_norm",
    ),
    OpCase(
        "log_loss",
        {"Predicted": r(4, 1, low=0.1, high=0.9), "Labels": (r(4, 1) > 0).astype("float64")},
        {"epsilon": 1e-4},
        ref=lambda Predicted, Labels, epsilon: {
            "Loss": -Labels * np.log(Predicted + epsilon)
            - (1 - Labels) * np.log(1 - Predicted + epsilon)
        },
        grad=["Predicted"],
    ),
    OpCase(
        "huber_loss",
        {"X": np.array([[0.1], [2.0], [-1.5], [0.3]]), "Y": np.array([[0.4], [0.2], [0.5], [0.0]])},
        {"delta": 1.0},
        ref=_huber_ref,
        grad=["X", "Y"],
        grad_outputs=["Out"],
    ),
    OpCase(
        "smooth_l1_loss",
        {"X": np.array([[0.1, 2.0], [-1.5, 0.3]]), "Y": np.array([[0.4, 0.2], [0.5, 0.0]])},
        ref=_smooth_l1_ref,
        grad=["X", "Y"],
        grad_outputs=["Out"],
    ),
    OpCase(
        "smooth_l1_loss",
        {
            "X": np.array([[0.1, 2.0], [-1.5, 0.3]]),
            "Y": np.array([[0.4, 0.2], [0.5, 0.0]]),
            "InsideWeight": np.array([[2.0, 1.0], [0.5, 3.0]]),
            "OutsideWeight": np.array([[1.0, 0.5], [2.0, 1.5]]),
        },
        {"sigma": 2.0},
        ref=_smooth_l1_ref,
        grad=["X", "Y"],
        grad_outputs=["Out"],
        name="weights",
    ),
    OpCase("bpr_loss", {"X": LOGITS, "Label": HARD}, ref=_bpr_ref, grad=["X"]),
]


def _tss_ref(X, Label, **_):
    sp = np.logaddexp(0, X)
    out = np.where(
        Label < -1,
        sp,
        np.where(
            Label < 0, sp - X, np.where(Label < 1, 2 * sp - X * Label, 2 * sp - X - X * (Label - 1))
        ),
    )
    return {"Y": out}


def _focal_ref(X, Label, FgNum, gamma=2.0, alpha=0.25):
    p = 1 / (1 + np.exp(-X))
    out = np.zeros_like(X)
    fg = max(FgNum[0], 1)
    for i in range(X.shape[0]):
        for c in range(X.shape[1]):
            g = Label[i, 0]
            if g == c + 1:
                out[i, c] = -alpha / fg * (1 - p[i, c]) ** gamma * np.log(p[i, c])
            elif g != -1:
                out[i, c] = -(1 - alpha) / fg * p[i, c] ** gamma * np.log(1 - p[i, c])
    return {"Out": out}


CASES += [
    OpCase(
        "teacher_student_sigmoid_loss",
        {
            "X": np.array([[0.3], [-1.2], [0.8], [2.0]]),
            "Label": np.array([[-2.0], [-0.5], [0.3], [1.7]]),
        },
        ref=_tss_ref,
        grad=["X"],
    ),
    OpCase(
        "sigmoid_focal_loss",
        {
            "X": r(4, 3) * 2,
            "Label": np.array([[1], [0], [3], [-1]], "int32"),
            "FgNum": np.array([2], "int32"),
        },
        {"gamma": 2.0, "alpha": 0.25},
        ref=_focal_ref,
        grad=["X"],
    ),
    OpCase(
        "sigmoid_focal_loss",
        {
            "X": r(3, 2),
            "Label": np.array([[2], [1], [0]], "int32"),
            "FgNum": np.array([0], "int32"),
        },
        {"gamma": 0.5, "alpha": 0.6},
        ref=_focal_ref,
        grad=["X"],
        name="gamma_half",
    ),
]
for red in ("none", "sum", "mean", "batchmean"):
    CASES.append(
        OpCase(
            "kldiv_loss",
            {"X": np.log(SOFT), "Target": np.where(SOFT > 0.1, SOFT, 0)},
            {"reduction": red},
            ref=_kl_ref,
            grad=["X"],
            name=red,
        )
    )


@pytest.mark.parametrize("case", CASES, ids=str)
def test_losses(case):
    check_case(case)


def test_hard_label_out_of_range_fails():
    from oar.testing import run_forward

    with pytest.raises(Exception, match="outside"):
        run_forward(
            OpCase(
                "softmax_with_cross_entropy",
                {"Logits": LOGITS, "Label": np.array([[0], [9], [1]], "int64")},
            )
        )
