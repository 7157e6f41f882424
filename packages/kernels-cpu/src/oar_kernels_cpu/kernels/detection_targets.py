"""Kernels of the SSD target ops (numpy only: per-image greedy loops)."""

from __future__ import annotations

import numpy as np
from oar.api import LoDTensor
from oar.errors import ShapeError

from oar_kernels_cpu.kernels import FLOATS, NUMERIC, kernel
from oar_kernels_cpu.kernels._sequence import array_of, with_lod

_EPS = 1e-6


def _offsets(t, rows: int) -> list:
    """The last-level LoD offsets of ``t`` (one image holding every row when it has none)."""
    if isinstance(t, LoDTensor) and t.lod():
        return [int(o) for o in t.lod()[-1]]
    return [0, rows]


def bipartite(dist):
    """Greedy global matching: the best remaining (row, col) pair first, each used once."""
    rows, cols = dist.shape
    idx = np.full(cols, -1, dtype=np.int32)
    val = np.zeros(cols, dtype=dist.dtype)
    work = dist.astype(np.float64).copy()
    for _ in range(min(rows, cols)):
        flat = int(np.argmax(work))
        r, c = divmod(flat, cols)
        if work[r, c] < _EPS:
            break
        idx[c], val[c] = r, dist[r, c]
        work[r, :] = -1.0
        work[:, c] = -1.0
    return idx, val


@kernel("bipartite_match", FLOATS, lod=True, generic=False)
def bipartite_match(inputs, attrs):
    t = inputs["DistMat"]
    d = array_of(t)
    off = _offsets(t, d.shape[0])
    n, cols = len(off) - 1, d.shape[1]
    idx = np.full((n, cols), -1, dtype=np.int32)
    val = np.zeros((n, cols), dtype=d.dtype)
    for i in range(n):
        block = d[off[i] : off[i + 1]]
        if not len(block):
            continue
        idx[i], val[i] = bipartite(block)
        if attrs["match_type"] == "per_prediction":
            best = block.argmax(axis=0)
            best_val = block[best, np.arange(cols)]
            extra = (idx[i] == -1) & (best_val >= attrs["dist_threshold"])
            idx[i][extra], val[i][extra] = best[extra], best_val[extra]
    return {"ColToRowMatchIndices": idx, "ColToRowMatchDist": val}


@kernel("target_assign", NUMERIC, lod=True, generic=False)
def target_assign(inputs, attrs):
    t = inputs["X"]
    x = array_of(t)
    if x.ndim == 2:
        x = x[:, None, :]
    match = array_of(inputs["MatchIndices"])
    n, p = match.shape
    off = _offsets(t, x.shape[0])
    if len(off) - 1 != n:
        raise ShapeError(
            f"target_assign: X holds {len(off) - 1} images in its LoD, MatchIndices {n}"
        )
    out = np.full((n, p, x.shape[2]), attrs["mismatch_value"], dtype=x.dtype)
    weight = np.zeros((n, p, 1), dtype=np.float32)
    cols = np.arange(p) if x.shape[1] == p else np.zeros(p, dtype=np.int64)
    for i in range(n):
        hit = match[i] > -1
        if np.any(match[i][hit] >= off[i + 1] - off[i]):
            raise ShapeError(
                f"target_assign: image {i} matches a row beyond its {off[i + 1] - off[i]} rows"
            )
        out[i, hit] = x[off[i] + match[i][hit], cols[hit]]
        weight[i, hit] = 1.0
    neg = inputs.get("NegIndices")
    if neg is not None:
        nv = array_of(neg).reshape(-1)
        noff = _offsets(neg, len(nv))
        for i in range(len(noff) - 1):
            sel = nv[noff[i] : noff[i + 1]]
            out[i, sel] = attrs["mismatch_value"]
            weight[i, sel] = 1.0
    return {"Out": out, "OutWeight": weight}


@kernel("mine_hard_examples", FLOATS, lod=True, generic=False)
def mine_hard_examples(inputs, attrs):
    if attrs["mining_type"] != "max_negative":
        raise NotImplementedError(
            "mine_hard_examples: only mining_type 'max_negative' is implemented"
        )
    loss = array_of(inputs["ClsLoss"])
    match = array_of(inputs["MatchIndices"])
    dist = array_of(inputs["MatchDist"])
    negs, offsets = [], [0]
    for i in range(match.shape[0]):
        cand = np.flatnonzero((match[i] == -1) & (dist[i] < attrs["neg_dist_threshold"]))
        k = min(int((match[i] != -1).sum() * attrs["neg_pos_ratio"]), len(cand))
        chosen = np.sort(cand[np.argsort(-loss[i, cand], kind="stable")[:k]])
        negs.append(chosen)
        offsets.append(offsets[-1] + len(chosen))
    flat = np.concatenate(negs).astype(np.int32).reshape(-1, 1)
    return {"NegIndices": with_lod(flat, [offsets]), "UpdatedMatchIndices": match.copy()}
