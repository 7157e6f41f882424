"""numpy kernels of the loss ops (cross_entropy and the losses on logits and targets)."""

from __future__ import annotations

import numpy as np

from oar_kernels_cpu.kernels import FLOATS, array_module, kernel
from oar_kernels_cpu.kernels._util import difference_grads

xp = array_module(__name__)

# --- loss ---


_TINY = {np.dtype(t): np.finfo(t).tiny for t in FLOATS}


def _hard_index(x, label):
    c = x.shape[-1]
    n = x.size // c if c else 0
    if label.size != n:
        raise ValueError(
            f"cross_entropy: hard Label of shape {list(label.shape)} must hold one class id per row "
            f"of X {list(x.shape)}, i.e. have shape {list(x.shape[:-1]) + [1]}"
        )
    return x.reshape(n, c), label.reshape(n).astype(np.int64, copy=False)


def _picked(x2, lab, ignore_index):
    """``x2[i, lab[i]]`` for every row, the ignored rows' mask (or None), in few numpy calls."""
    n, c = x2.shape
    ignore = None
    # viewed as unsigned, negative ids are huge: one max() checks both ends
    if (n and int(lab.view(np.uint64).max()) >= c) or 0 <= ignore_index < c:
        ignore = lab == ignore_index
        if xp.count_nonzero(ignore):
            lab = xp.where(ignore, 0, lab)
        else:
            ignore = None
        bad = (lab < 0) | (lab >= c)
        if xp.count_nonzero(bad):
            raise ValueError(
                f"cross_entropy: Label holds class ids {lab[bad][:5].tolist()} outside [0, {c})"
            )
    rows = xp.arange(n)
    return x2[rows, lab], rows, lab, ignore


@kernel("cross_entropy", FLOATS)
def cross_entropy(inputs, attrs):
    x, label = inputs["X"], inputs["Label"]
    tiny = _TINY[x.dtype]
    if attrs["soft_label"]:
        y = -(label * xp.log(xp.maximum(x, tiny))).sum(axis=-1, keepdims=True)
        return {"Y": y.astype(x.dtype, copy=False)}
    if label.dtype.kind not in "iu":
        raise TypeError(f"cross_entropy: hard Label must hold int64 class ids, given {label.dtype}")
    x2, lab = _hard_index(x, label)
    p, _rows, _lab, ignore = _picked(x2, lab, attrs["ignore_index"])
    y = xp.log(xp.maximum(p, tiny, out=p), out=p)
    xp.negative(y, out=y)
    if ignore is not None:
        y[ignore] = 0
    return {"Y": y.reshape(x.shape[:-1] + (1,))}


@kernel("cross_entropy_grad", FLOATS)
def cross_entropy_grad(inputs, attrs):
    x, label, dy = inputs["X"], inputs["Label"], inputs["Y@GRAD"]
    tiny = _TINY[x.dtype]
    if attrs["soft_label"]:
        return {"X@GRAD": -label / xp.maximum(x, tiny) * dy}
    x2, lab = _hard_index(x, label)
    p, rows, lab, ignore = _picked(x2, lab, attrs["ignore_index"])
    g = xp.maximum(p, tiny, out=p)
    xp.divide(dy.reshape(-1), g, out=g)
    xp.negative(g, out=g)
    if ignore is not None:
        g[ignore] = 0
    dx = xp.zeros_like(x2)
    dx[rows, lab] = g
    return {"X@GRAD": dx.reshape(x.shape)}


# --- losses ---


def _check_ids(lab: xp.ndarray, n: int, ignore: int, op: str) -> None:
    bad = ((lab < 0) | (lab >= n)) & (lab != ignore)
    if bad.any():
        raise ValueError(f"{op}: Label holds class ids {lab[bad][:5].tolist()} outside [0, {n})")


@kernel("softmax_with_cross_entropy", FLOATS)
def softmax_with_cross_entropy(inputs, attrs):
    x, label = inputs["Logits"], inputs["Label"]
    axis = attrs["axis"] % x.ndim
    xl = xp.moveaxis(x, axis, -1)
    z = xl - xl.max(axis=-1, keepdims=True)
    lse = xp.log(xp.exp(z).sum(axis=-1, keepdims=True))
    logp = z - lse
    soft = xp.exp(logp)
    if attrs["soft_label"]:
        lab = xp.moveaxis(label, axis, -1)
        loss = -(lab * logp).sum(axis=-1, keepdims=True)
    else:
        lab = xp.moveaxis(label, axis, -1).astype(np.int64, copy=False)
        if lab.shape[:-1] != xl.shape[:-1] or lab.shape[-1] != 1:
            raise ValueError(
                f"softmax_with_cross_entropy: hard Label of shape {list(label.shape)} must match "
                f"Logits {list(x.shape)} with 1 at axis {axis}"
            )
        ignore = attrs["ignore_index"]
        _check_ids(lab, xl.shape[-1], ignore, "softmax_with_cross_entropy")
        keep = lab != ignore
        picked = xp.take_along_axis(logp, xp.where(keep, lab, 0), axis=-1)
        loss = xp.where(keep, -picked, 0).astype(x.dtype, copy=False)
    return {"Softmax": xp.moveaxis(soft, -1, axis), "Loss": xp.moveaxis(loss, -1, axis)}


@kernel("softmax_with_cross_entropy_grad", FLOATS)
def softmax_with_cross_entropy_grad(inputs, attrs):
    sm, label, d = inputs["Softmax"], inputs["Label"], inputs["Loss@GRAD"]
    axis = attrs["axis"] % sm.ndim
    if attrs["soft_label"]:
        return {"Logits@GRAD": (sm - label) * d}
    lab = label.astype(np.int64, copy=False)
    keep = lab != attrs["ignore_index"]
    dx = sm.copy()
    hot = xp.take_along_axis(dx, xp.where(keep, lab, 0), axis=axis)
    xp.put_along_axis(dx, xp.where(keep, lab, 0), hot - keep, axis=axis)
    dx *= xp.where(keep, d, 0)
    return {"Logits@GRAD": dx}


def _sce_mask(x, label, attrs):
    keep = label != attrs["ignore_index"]
    scale = 1.0
    if attrs["normalize"]:
        scale = 1.0 / max(int(keep.sum()), 1)
    return keep, scale


@kernel("sigmoid_cross_entropy_with_logits", FLOATS)
def sigmoid_cross_entropy_with_logits(inputs, attrs):
    x, z = inputs["X"], inputs["Label"]
    keep, scale = _sce_mask(x, z, attrs)
    out = xp.maximum(x, 0) - x * z + xp.log1p(xp.exp(-xp.abs(x)))
    out = xp.where(keep, out, 0) * scale
    return {"Out": out.astype(x.dtype, copy=False)}


@kernel("sigmoid_cross_entropy_with_logits_grad", FLOATS)
def sigmoid_cross_entropy_with_logits_grad(inputs, attrs):
    x, z, d = inputs["X"], inputs["Label"], inputs["Out@GRAD"]
    keep, scale = _sce_mask(x, z, attrs)
    sig = xp.exp(-xp.logaddexp(0, -x))
    dx = xp.where(keep, (sig - z) * d, 0) * scale
    return {"X@GRAD": dx.astype(x.dtype, copy=False)}


@kernel("log_loss", FLOATS)
def log_loss(inputs, attrs):
    p, y = inputs["Predicted"], inputs["Labels"]
    eps = attrs["epsilon"]
    return {"Loss": -y * xp.log(p + eps) - (1 - y) * xp.log(1 - p + eps)}


@kernel("log_loss_grad", FLOATS)
def log_loss_grad(inputs, attrs):
    p, y, d = inputs["Predicted"], inputs["Labels"], inputs["Loss@GRAD"]
    eps = attrs["epsilon"]
    return {"Predicted@GRAD": d * (-y / (p + eps) + (1 - y) / (1 - p + eps))}


@kernel("huber_loss", FLOATS)
def huber_loss(inputs, attrs):
    r = inputs["Y"] - inputs["X"]
    delta = attrs["delta"]
    a = xp.abs(r)
    out = xp.where(a <= delta, 0.5 * r * r, delta * (a - 0.5 * delta)).astype(r.dtype, copy=False)
    return {"Residual": r, "Out": out}


@kernel("huber_loss_grad", FLOATS, wants_outputs=True)
def huber_loss_grad(inputs, attrs, wanted):
    r, d = inputs["Residual"], inputs["Out@GRAD"]
    delta = attrs["delta"]
    dy = d * xp.clip(r, -delta, delta)  # r inside [-delta, delta], else delta * sign(r)
    return difference_grads(wanted, "Y@GRAD", "X@GRAD", dy)


@kernel("smooth_l1_loss", FLOATS)
def smooth_l1_loss(inputs, attrs):
    x, y = inputs["X"], inputs["Y"]
    diff = x - y
    if inputs.get("InsideWeight") is not None:
        diff = diff * inputs["InsideWeight"]
    s2 = attrs["sigma"] ** 2
    a = xp.abs(diff)
    val = xp.where(a < 1.0 / s2, 0.5 * s2 * diff * diff, a - 0.5 / s2)
    if inputs.get("OutsideWeight") is not None:
        val = val * inputs["OutsideWeight"]
    out = val.reshape(x.shape[0], -1).sum(axis=1, keepdims=True).astype(x.dtype, copy=False)
    return {"Diff": diff, "Out": out}


@kernel("smooth_l1_loss_grad", FLOATS, wants_outputs=True)
def smooth_l1_loss_grad(inputs, attrs, wanted):
    diff, d = inputs["Diff"], inputs["Out@GRAD"]
    s2 = attrs["sigma"] ** 2
    g = xp.where(xp.abs(diff) < 1.0 / s2, s2 * diff, xp.sign(diff))
    g = g * d.reshape((-1,) + (1,) * (diff.ndim - 1))
    if inputs.get("OutsideWeight") is not None:
        g = g * inputs["OutsideWeight"]
    if inputs.get("InsideWeight") is not None:
        g = g * inputs["InsideWeight"]
    return difference_grads(wanted, "X@GRAD", "Y@GRAD", g.astype(diff.dtype, copy=False))


def _bpr_parts(x, label):
    n = x.shape[-1]
    x2 = x.reshape(-1, n)
    lab = label.reshape(-1).astype(np.int64, copy=False)
    _check_ids(lab, n, -(2**62), "bpr_loss")
    pos = x2[xp.arange(x2.shape[0]), lab][:, None]
    diff = pos - x2  # [rows, n]; the label column is 0 and is excluded below
    others = xp.ones_like(x2, dtype=bool)
    others[xp.arange(x2.shape[0]), lab] = False
    return x2, lab, diff, others


@kernel("bpr_loss", FLOATS)
def bpr_loss(inputs, attrs):
    x = inputs["X"]
    _, _, diff, others = _bpr_parts(x, inputs["Label"])
    n = x.shape[-1]
    logsig = -xp.logaddexp(0, -diff)
    y = -(xp.where(others, logsig, 0).sum(axis=1)) / (n - 1)
    return {"Y": y.reshape(x.shape[:-1] + (1,)).astype(x.dtype, copy=False)}


@kernel("bpr_loss_grad", FLOATS)
def bpr_loss_grad(inputs, attrs):
    x, d = inputs["X"], inputs["Y@GRAD"]
    x2, lab, diff, others = _bpr_parts(x, inputs["Label"])
    n = x.shape[-1]
    # d/d diff of -log(sigmoid(diff)) is -(1 - sigmoid(diff)) = -sigmoid(-diff)
    g = xp.where(others, -xp.exp(-xp.logaddexp(0, diff)), 0) * (d.reshape(-1, 1) / (n - 1))
    dx = -g
    dx[xp.arange(x2.shape[0]), lab] = g.sum(axis=1)
    return {"X@GRAD": dx.reshape(x.shape).astype(x.dtype, copy=False)}


def _kl_scale(x, reduction):
    return {
        "none": 1.0,
        "sum": 1.0,
        "mean": 1.0 / max(x.size, 1),
        "batchmean": 1.0 / max(x.shape[0] if x.ndim else 1, 1),
    }[reduction]


@kernel("kldiv_loss", FLOATS)
def kldiv_loss(inputs, attrs):
    x, t = inputs["X"], inputs["Target"]
    pos = t > 0
    loss = xp.where(pos, t * (xp.log(xp.where(pos, t, 1)) - x), 0).astype(x.dtype, copy=False)
    red = attrs["reduction"]
    if red == "none":
        return {"Loss": loss}
    return {"Loss": xp.asarray([loss.sum() * _kl_scale(x, red)], dtype=x.dtype)}


@kernel("kldiv_loss_grad", FLOATS)
def kldiv_loss_grad(inputs, attrs):
    x, t, d = inputs["X"], inputs["Target"], inputs["Loss@GRAD"]
    red = attrs["reduction"]
    dx = xp.where(t > 0, -t, 0)
    if red == "none":
        dx = dx * d
    else:
        dx = dx * (d.reshape(-1)[0] * _kl_scale(x, red))
    return {"X@GRAD": dx.astype(x.dtype, copy=False)}


def _softplus(x):
    return xp.logaddexp(0, x)


def _sigmoid(x):
    return xp.exp(-xp.logaddexp(0, -x))


@kernel("teacher_student_sigmoid_loss", FLOATS)
def teacher_student_sigmoid_loss(inputs, attrs):
    """Label < -1: negative click, no teacher; [-1, 0): positive click, no teacher;
    [0, 1): negative click with teacher score ``label``; >= 1: positive click with score ``label - 1``."""
    x, label = inputs["X"], inputs["Label"]
    sp = _softplus(x)  # max(x, 0) + log(1 + exp(-|x|))
    click = (label >= 1) | ((label >= -1) & (label < 0))
    teacher = label >= 0
    score = xp.where(label >= 1, label - 1, label)
    y = sp - x * click + xp.where(teacher, sp - x * score, 0)
    return {"Y": y.astype(x.dtype, copy=False)}


@kernel("teacher_student_sigmoid_loss_grad", FLOATS)
def teacher_student_sigmoid_loss_grad(inputs, attrs):
    x, label, d = inputs["X"], inputs["Label"], inputs["Y@GRAD"]
    p = _sigmoid(xp.clip(x, attrs["soft_max_lower_bound"], attrs["soft_max_up_bound"]))
    click = (label >= 1) | ((label >= -1) & (label < 0))
    teacher = label >= 0
    score = xp.where(label >= 1, label - 1, label)
    g = p - click + xp.where(teacher, p - score, 0)
    return {"X@GRAD": (g * d).astype(x.dtype, copy=False)}


def _focal_parts(inputs, attrs):
    x, label = inputs["X"], inputs["Label"].reshape(-1, 1)
    fg = max(float(xp.asarray(inputs["FgNum"]).reshape(-1)[0]), 1.0)
    cls = xp.arange(1, x.shape[1] + 1)  # class ids are 1-based; 0 is background, -1 ignored
    pos = (label == cls).astype(x.dtype)
    neg = ((label != -1) & (label != cls)).astype(x.dtype)
    return x, pos, neg, attrs["alpha"] / fg, (1 - attrs["alpha"]) / fg, attrs["gamma"]


@kernel("sigmoid_focal_loss", FLOATS)
def sigmoid_focal_loss(inputs, attrs):
    x, pos, neg, s_pos, s_neg, gamma = _focal_parts(inputs, attrs)
    p = _sigmoid(x)
    term_pos = xp.power(1 - p, gamma) * -_softplus(-x)  # (1-p)^g log p
    term_neg = xp.power(p, gamma) * -_softplus(x)  # p^g log(1-p)
    out = -pos * term_pos * s_pos - neg * term_neg * s_neg
    return {"Out": out.astype(x.dtype, copy=False)}


@kernel("sigmoid_focal_loss_grad", FLOATS)
def sigmoid_focal_loss_grad(inputs, attrs):
    x, pos, neg, s_pos, s_neg, gamma = _focal_parts(inputs, attrs)
    p = _sigmoid(x)
    d_pos = xp.power(1 - p, gamma) * ((1 - p) + gamma * p * _softplus(-x))  # d/dx (1-p)^g log p
    d_neg = xp.power(p, gamma) * (-gamma * (1 - p) * _softplus(x) - p)  # d/dx p^g log(1-p)
    g = -pos * d_pos * s_pos - neg * d_neg * s_neg
    return {"X@GRAD": (g * inputs["Out@GRAD"]).astype(x.dtype, copy=False)}
