"""numpy kernels of linear_chain_crf (forward-backward in log space) and crf_decoding.

Numpy-only (``generic=False``): dynamic programming over host LoD sequences; a device
plugin overrides them.
"""

from __future__ import annotations

import numpy as np
from oar.errors import ShapeError

from oar_kernels_cpu.kernels import FLOATS, kernel
from oar_kernels_cpu.kernels._sequence import array_of, last_level, with_lod


def _logsumexp(a: np.ndarray, axis: int) -> np.ndarray:
    top = a.max(axis=axis, keepdims=True)
    return np.squeeze(top, axis) + np.log(np.exp(a - top).sum(axis=axis))


def _sequences(inputs, op: str) -> tuple:
    """(emission rows per sequence as slices of a 2-D array, that array, lod or None, padded?)."""
    length = inputs.get("Length")
    if length is None:
        x, off, lod = last_level(inputs["Emission"], op, "Emission")
        return [slice(a, b) for a, b in zip(off[:-1], off[1:])], x, lod, None
    x = array_of(inputs["Emission"])
    lens = array_of(length).reshape(-1).astype(np.int64)
    b, width = x.shape[0], x.shape[1]
    if len(lens) != b or (lens < 0).any() or (lens > width).any():
        raise ShapeError(
            f"{op}: Length must hold {b} lengths in [0, {width}], given {lens.tolist()}"
        )
    flat = x.reshape(b * width, x.shape[2])
    return [slice(i * width, i * width + n) for i, n in enumerate(lens)], flat, None, (b, width)


def _labels(inputs, padded) -> np.ndarray:
    return array_of(inputs["Label"]).reshape(-1).astype(np.int64)


def _forward_backward(xs: np.ndarray, w: np.ndarray) -> tuple:
    start, end, trans = w[0], w[1], w[2:]
    n = len(xs)
    alpha = np.empty_like(xs)
    beta = np.empty_like(xs)
    alpha[0] = start + xs[0]
    for t in range(1, n):
        alpha[t] = _logsumexp(alpha[t - 1][:, None] + trans, axis=0) + xs[t]
    beta[n - 1] = end
    for t in range(n - 2, -1, -1):
        beta[t] = _logsumexp(trans + (xs[t + 1] + beta[t + 1])[None, :], axis=1)
    log_z = _logsumexp(alpha[n - 1] + end, axis=0)
    return alpha, beta, log_z


def _score(xs: np.ndarray, ys: np.ndarray, w: np.ndarray) -> float:
    start, end, trans = w[0], w[1], w[2:]
    return (
        start[ys[0]] + xs[np.arange(len(ys)), ys].sum() + trans[ys[:-1], ys[1:]].sum() + end[ys[-1]]
    )


def _check_labels(op: str, ys: np.ndarray, d: int) -> None:
    if ys.size and (ys.min() < 0 or ys.max() >= d):
        raise ShapeError(f"{op}: Label values must lie in [0, {d}), given {ys.min()}..{ys.max()}")


@kernel("linear_chain_crf", FLOATS, lod=True, generic=False)
def linear_chain_crf(inputs, attrs):
    segs, x, _, padded = _sequences(inputs, "linear_chain_crf")
    w = array_of(inputs["Transition"]).astype(np.float64)
    ys = _labels(inputs, padded)
    _check_labels("linear_chain_crf", ys, x.shape[1])
    nll = np.zeros((len(segs), 1), x.dtype)
    alpha_out = np.zeros_like(x)
    for i, s in enumerate(segs):
        if s.stop == s.start:
            continue
        xs = x[s].astype(np.float64)
        alpha, _, log_z = _forward_backward(xs, w)
        nll[i, 0] = log_z - _score(xs, ys[s], w)
        alpha_out[s] = np.exp(alpha - _logsumexp(alpha, axis=1)[:, None])
    shape = array_of(inputs["Emission"]).shape
    emission_exps = np.exp(x - x.max(axis=1, keepdims=True)).reshape(shape)
    return {
        "Alpha": alpha_out.reshape(shape),
        "EmissionExps": emission_exps,
        "TransitionExps": np.exp(w).astype(x.dtype),
        "LogLikelihood": nll,
    }


@kernel("linear_chain_crf_grad", FLOATS, lod=True, generic=False)
def linear_chain_crf_grad(inputs, attrs):
    segs, x, lod, padded = _sequences(inputs, "linear_chain_crf_grad")
    w = array_of(inputs["Transition"]).astype(np.float64)
    ys = _labels(inputs, padded)
    g = array_of(inputs["LogLikelihood@GRAD"]).reshape(-1)
    dx = np.zeros(x.shape, np.float64)
    dw = np.zeros_like(w)
    trans = w[2:]
    for i, s in enumerate(segs):
        n = s.stop - s.start
        if not n:
            continue
        xs, y = x[s].astype(np.float64), ys[s]
        alpha, beta, log_z = _forward_backward(xs, w)
        marg = np.exp(alpha + beta - log_z)
        gx = marg.copy()
        gx[np.arange(n), y] -= 1
        dx[s] = g[i] * gx
        dw[0] += g[i] * (marg[0] - np.eye(w.shape[1])[y[0]])
        dw[1] += g[i] * (marg[n - 1] - np.eye(w.shape[1])[y[-1]])
        if n > 1:
            pair = alpha[:-1, :, None] + trans[None] + (xs[1:] + beta[1:])[:, None, :] - log_z
            dt = np.exp(pair).sum(axis=0)
            np.subtract.at(dt, (y[:-1], y[1:]), 1.0)
            dw[2:] += g[i] * dt
    shape = array_of(inputs["Emission"]).shape
    dx = dx.astype(x.dtype).reshape(shape)
    return {
        "Emission@GRAD": with_lod(dx, lod) if lod else dx,
        "Transition@GRAD": dw.astype(x.dtype),
    }


def _viterbi(xs: np.ndarray, w: np.ndarray) -> np.ndarray:
    start, end, trans = w[0], w[1], w[2:]
    n = len(xs)
    score = start + xs[0]
    back = np.zeros((n, xs.shape[1]), np.int64)
    for t in range(1, n):
        cand = score[:, None] + trans
        back[t] = cand.argmax(axis=0)
        score = cand.max(axis=0) + xs[t]
    path = np.zeros(n, np.int64)
    path[-1] = int((score + end).argmax())
    for t in range(n - 1, 0, -1):
        path[t - 1] = back[t, path[t]]
    return path


@kernel("crf_decoding", FLOATS, lod=True, generic=False)
def crf_decoding(inputs, attrs):
    segs, x, lod, padded = _sequences(inputs, "crf_decoding")
    w = array_of(inputs["Transition"]).astype(np.float64)
    path = np.zeros(x.shape[0], np.int64)
    for s in segs:
        if s.stop > s.start:
            path[s] = _viterbi(x[s].astype(np.float64), w)
    if inputs.get("Label") is not None:
        path = (path == array_of(inputs["Label"]).reshape(-1)).astype(np.int64)
    if padded is not None:
        return {"ViterbiPath": path.reshape(padded)}
    return {"ViterbiPath": with_lod(path.reshape(-1, 1), lod)}
