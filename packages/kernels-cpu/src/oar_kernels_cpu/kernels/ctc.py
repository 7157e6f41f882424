"""numpy kernels of warpctc (CTC forward-backward in log space) and ctc_align.

Numpy-only (``generic=False``): dynamic programming over host LoD sequences; a device
plugin overrides them.
"""

from __future__ import annotations

import numpy as np
from oar.errors import ShapeError

from oar_kernels_cpu.kernels import FLOATS, kernel
from oar_kernels_cpu.kernels._sequence import array_of, last_level, with_lod

_NEG = -np.inf


def _lse(*arrays):
    stack = np.stack(arrays)
    top = stack.max(axis=0)
    safe = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        return safe + np.log(np.exp(stack - safe).sum(axis=0))


def _log_softmax(x: np.ndarray) -> np.ndarray:
    z = x - x.max(axis=1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=1, keepdims=True))


def ctc_one(logits: np.ndarray, label: np.ndarray, blank: int) -> tuple:
    """(loss, gradient wrt the unnormalised logits) of one sequence."""
    t_len = len(logits)
    logp = _log_softmax(logits.astype(np.float64))
    ext = np.full(2 * len(label) + 1, blank, dtype=np.int64)
    ext[1::2] = label
    s_len = len(ext)
    # a path may skip the blank between two different labels
    skip = np.zeros(s_len, bool)
    skip[2:] = (ext[2:] != blank) & (ext[2:] != ext[:-2])
    alpha = np.full((t_len, s_len), _NEG)
    alpha[0, 0] = logp[0, ext[0]]
    if s_len > 1:
        alpha[0, 1] = logp[0, ext[1]]
    for t in range(1, t_len):
        prev = alpha[t - 1]
        one = np.concatenate([[_NEG], prev[:-1]])
        two = np.where(skip, np.concatenate([[_NEG, _NEG], prev[:-2]]), _NEG)
        alpha[t] = _lse(prev, one, two) + logp[t, ext]
    # beta[t, s]: log-probability of the rest of the path after step t, from state s
    beta = np.full((t_len, s_len), _NEG)
    beta[t_len - 1, s_len - 1] = 0.0
    if s_len > 1:
        beta[t_len - 1, s_len - 2] = 0.0
    skip_from = np.concatenate([skip[2:], [False, False]])
    for t in range(t_len - 2, -1, -1):
        nxt = beta[t + 1] + logp[t + 1, ext]
        one = np.concatenate([nxt[1:], [_NEG]])
        two = np.where(skip_from, np.concatenate([nxt[2:], [_NEG, _NEG]]), _NEG)
        beta[t] = _lse(nxt, one, two)
    log_p = _lse(alpha[t_len - 1, s_len - 1], alpha[t_len - 1, s_len - 2] if s_len > 1 else _NEG)
    if not np.isfinite(log_p):
        raise ShapeError(
            f"warpctc: a label of length {len(label)} cannot be aligned to {t_len} time steps"
        )
    post = np.zeros_like(logp)
    gamma = np.exp(alpha + beta - log_p)
    np.add.at(post.T, ext, gamma.T)
    grad = np.exp(logp) - post
    return -log_p, grad


def _sequences(inputs, op: str) -> tuple:
    """(logit rows per sequence, label ids per sequence, 2-D logits, lod or padded shape)."""
    if inputs.get("LogitsLength") is not None:
        x = array_of(inputs["Logits"])
        t_max, batch = x.shape[0], x.shape[1]
        t_lens = array_of(inputs["LogitsLength"]).reshape(-1).astype(np.int64)
        l_lens = array_of(inputs["LabelLength"]).reshape(-1).astype(np.int64)
        labels = array_of(inputs["Label"]).reshape(batch, -1)
        flat = x.transpose(1, 0, 2).reshape(batch * t_max, x.shape[2])
        rows = [np.arange(b * t_max, b * t_max + t_lens[b]) for b in range(batch)]
        return rows, [labels[b, : l_lens[b]] for b in range(batch)], flat, (t_max, batch)
    x, off, lod = last_level(inputs["Logits"], op, "Logits")
    lab, loff, _ = last_level(inputs["Label"], op, "Label")
    if len(loff) != len(off):
        raise ShapeError(f"{op}: Logits has {len(off) - 1} sequences but Label has {len(loff) - 1}")
    rows = [np.arange(a, b) for a, b in zip(off[:-1], off[1:])]
    labels = [lab.reshape(-1)[a:b].astype(np.int64) for a, b in zip(loff[:-1], loff[1:])]
    return rows, labels, x, lod


def _unflat(grad: np.ndarray, layout):
    if isinstance(layout, tuple):
        t_max, batch = layout
        return grad.reshape(batch, t_max, -1).transpose(1, 0, 2)
    return with_lod(grad, layout)


@kernel("warpctc", FLOATS, lod=True, generic=False)
def warpctc(inputs, attrs):
    rows, labels, x, layout = _sequences(inputs, "warpctc")
    blank = attrs["blank"]
    loss = np.zeros((len(rows), 1), x.dtype)
    grad = np.zeros(x.shape, x.dtype)
    for i, (r, lab) in enumerate(zip(rows, labels)):
        if lab.size and (lab.min() < 0 or lab.max() >= x.shape[1] or (lab == blank).any()):
            raise ShapeError(
                f"warpctc: labels must be class ids in [0, {x.shape[1]}) other than the blank "
                f"{blank}, given {lab.tolist()} in sequence {i}"
            )
        if len(r) == 0:
            continue
        loss[i, 0], g = ctc_one(x[r], lab, blank)
        if attrs["norm_by_times"]:
            g = g / len(r)
        grad[r] = g
    return {"Loss": loss, "WarpCTCGrad": _unflat(grad, layout)}


@kernel("warpctc_grad", FLOATS, lod=True, generic=False)
def warpctc_grad(inputs, attrs):
    g = array_of(inputs["Loss@GRAD"]).reshape(-1)
    saved = array_of(inputs["WarpCTCGrad"])
    if inputs.get("LogitsLength") is not None:
        return {"Logits@GRAD": saved * g.reshape(1, -1, 1)}
    _, off, lod = last_level(inputs["Logits"], "warpctc_grad", "Logits")
    scale = np.repeat(g, np.diff(off)).reshape(-1, 1)
    return {"Logits@GRAD": with_lod(saved * scale, lod)}


def _align(ids: np.ndarray, blank: int, merge: bool) -> np.ndarray:
    if merge and len(ids):
        keep = np.concatenate([[True], ids[1:] != ids[:-1]])
        ids = ids[keep]
    return ids[ids != blank]


@kernel("ctc_align", ("int32", "int64"), lod=True, generic=False)
def ctc_align(inputs, attrs):
    blank, merge = attrs["blank"], attrs["merge_repeated"]
    if inputs.get("InputLength") is not None:
        x = array_of(inputs["Input"])
        lens = array_of(inputs["InputLength"]).reshape(-1).astype(np.int64)
        out = np.full(x.shape, attrs["padding_value"], x.dtype)
        out_lens = np.zeros((len(lens), 1), np.int64)
        for b, n in enumerate(lens):
            ids = _align(x[b].reshape(-1)[:n], blank, merge)
            out[b, : len(ids)] = ids
            out_lens[b, 0] = len(ids)
        return {"Output": out, "OutputLength": out_lens}
    x, off, lod = last_level(inputs["Input"], "ctc_align", "Input")
    flat = x.reshape(-1)
    parts = [_align(flat[a:b], blank, merge) for a, b in zip(off[:-1], off[1:])]
    lengths = [len(p) for p in parts]
    out = np.concatenate(parts).reshape(-1, 1) if parts else np.zeros((0, 1), x.dtype)
    new_lod = lod[:-1] + [np.concatenate([[0], np.cumsum(lengths)]).tolist()]
    return {
        "Output": with_lod(out.astype(x.dtype), new_lod),
        "OutputLength": np.array(lengths, np.int64).reshape(-1, 1),
    }
