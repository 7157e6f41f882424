"""Kernels of gather_tree (one backward pass over time, all beams at once), beam_search and
beam_search_decode (LoD prefixes and sentences)."""

from __future__ import annotations

from oar.api import LoDTensor
from oar.errors import ShapeError

from oar_kernels_cpu.kernels import array_module, kernel

xp = array_module(__name__)


@kernel("gather_tree", ("int32", "int64"))
def gather_tree(inputs, attrs):
    ids, parents = inputs["Ids"], inputs["Parents"]
    steps, batch, beam = ids.shape
    if parents.size and (parents.min() < 0 or parents.max() >= beam):
        raise ShapeError(f"gather_tree: Parents must be beam indices in [0, {beam})")
    out = xp.empty_like(ids)
    if not steps:
        return {"Out": out}
    rows = xp.arange(batch)[:, None]
    beams = xp.broadcast_to(xp.arange(beam), (batch, beam))
    for t in range(steps - 1, -1, -1):
        out[t] = ids[t][rows, beams]
        beams = parents[t][rows, beams]
    return {"Out": out}


# --- beam_search / beam_search_decode over LoD ---
# LoD offsets are host lists; scores and ids stay in the device's array module, and only
# small index vectors (the kept candidates) come back to the host with ``tolist()``.


def _lod_and_array(t, op: str, slot: str) -> tuple:
    lod = getattr(t, "_lod", None)
    if not lod:
        raise ShapeError(
            f"{op}: input {slot} must be a LoDTensor with LoD (levels: sources -> prefixes -> "
            f"candidate rows), given a tensor without LoD"
        )
    arr = t._array
    if lod[-1][-1] != arr.shape[0]:
        raise ShapeError(
            f"{op}: the LoD of input {slot} ends at row {lod[-1][-1]} but the tensor has "
            f"{arr.shape[0]} rows (LoD offsets {lod[-1]})"
        )
    return [list(level) for level in lod], arr


def _absolute(lod: list, level: int) -> list:
    """Offsets of LoD level ``level`` counted in rows (the levels below composed in)."""
    off = lod[level]
    for lower in lod[level + 1 :]:
        off = [lower[o] for o in off]
    return off


def _candidates(inputs, attrs, rows: int):
    """[rows, K] candidate ids and scores; a finished prefix keeps only (end_id, its score)."""
    scores = inputs["scores"]._array if hasattr(inputs["scores"], "_array") else inputs["scores"]
    scores = scores.reshape(rows, -1)
    pre_ids = _plain(inputs["pre_ids"]).reshape(rows)
    pre_scores = _plain(inputs["pre_scores"]).reshape(rows, 1).astype(scores.dtype)
    ids = inputs.get("ids")
    if ids is None:
        ids = xp.broadcast_to(xp.arange(scores.shape[1], dtype=pre_ids.dtype), scores.shape)
    else:
        ids = _plain(ids).reshape(scores.shape).astype(pre_ids.dtype)
    if not attrs["is_accumulated"]:
        scores = pre_scores + xp.log(scores)
    ended = pre_ids == attrs["end_id"]
    first = xp.arange(scores.shape[1]) == 0
    scores = xp.where(ended[:, None], xp.where(first, pre_scores, -xp.inf), scores)
    ids = xp.where(ended[:, None], attrs["end_id"], ids)
    return ids, scores, ended


def _plain(t):
    return t._array if hasattr(t, "_array") else t


@kernel("beam_search", ("float32", "float64"), lod=True)
def beam_search(inputs, attrs):
    lod, _ = _lod_and_array(inputs["scores"], "beam_search", "scores")
    level, beam = attrs["level"], attrs["beam_size"]
    if not 0 <= level < len(lod):
        raise ShapeError(f"beam_search: level {level} is not a LoD level of scores ({len(lod)})")
    high = _absolute(lod, level)
    rows = high[-1]
    ids, scores, ended = _candidates(inputs, attrs, rows)
    width = scores.shape[1]
    flat_scores, flat_ids = scores.reshape(-1), ids.reshape(-1)
    ended_rows = ended.tolist()
    kept: list = []  # flat candidate indices, grouped by source, in row order
    for a, b in zip(high[:-1], high[1:]):
        if b == a:
            continue
        seg = flat_scores[a * width : b * width]
        order = xp.argsort(-seg, kind="stable")[:beam]
        alive = order[seg[order] > -xp.inf].tolist()
        if all(ended_rows[a + i // width] for i in alive):
            continue  # every kept branch had already ended: this source is finished
        # within the source: by prefix row, then best first (argsort order is score order)
        kept += [a * width + i for i in sorted(alive, key=lambda i: (i // width, alive.index(i)))]
    sel = xp.asarray(kept, dtype=xp.int64)
    row_of = [k // width for k in kept]
    low = [0] * (rows + 1)
    for r in row_of:
        low[r + 1] += 1
    for r in range(rows):
        low[r + 1] += low[r]
    out_lod = [high, low]
    sel_ids = flat_ids[sel].reshape(-1, 1)
    sel_scores = flat_scores[sel].reshape(-1, 1)
    return {
        "selected_ids": LoDTensor(sel_ids, out_lod),
        "selected_scores": LoDTensor(sel_scores, out_lod),
        "parent_idx": xp.asarray(row_of, dtype=xp.int32),
    }


def _source_of_rows(lod: list) -> list:
    """For each row of a two-level beam LoD: the source (level-0 segment) it belongs to."""
    top, bottom = lod[0], lod[1]
    prefix_source = [s for s in range(len(top) - 1) for _ in range(top[s + 1] - top[s])]
    return [
        prefix_source[p] for p in range(len(bottom) - 1) for _ in range(bottom[p + 1] - bottom[p])
    ]


def _parents(lod: list) -> list:
    bottom = lod[1]
    return [p for p in range(len(bottom) - 1) for _ in range(bottom[p + 1] - bottom[p])]


def _trace(steps: list, t: int, row: int, end_id: int) -> tuple:
    """Tokens and scores of the branch ending at ``row`` of step ``t``, cut after its first end."""
    toks, scs = [], []
    while True:
        ids, scores, parents = steps[t]
        toks.append(ids[row])
        scs.append(scores[row])
        if t == 0:
            break
        row, t = parents[row], t - 1
    toks.reverse()
    scs.reverse()
    if end_id in toks[1:]:
        cut = toks.index(end_id, 1) + 1
        toks, scs = toks[:cut], scs[:cut]
    return toks, scs


def _steps(value) -> list:
    """The per-step tensors of a duplicable slot, or of the one tensor array it holds."""
    if len(value) == 1 and isinstance(value[0], (list, tuple)):
        return list(value[0])
    return list(value)


@kernel("beam_search_decode", ("float32", "float64"), lod=True)
def beam_search_decode(inputs, attrs):
    id_steps, score_steps = _steps(inputs["Ids"]), _steps(inputs["Scores"])
    if len(id_steps) != len(score_steps) or not id_steps:
        raise ShapeError(
            f"beam_search_decode: Ids and Scores must hold the same number (> 0) of steps, given "
            f"{len(id_steps)} and {len(score_steps)}"
        )
    steps, sources = [], []
    for k, (ids, scores) in enumerate(zip(id_steps, score_steps)):
        lod, arr = _lod_and_array(ids, "beam_search_decode", f"Ids[{k}]")
        if len(lod) != 2:
            raise ShapeError(
                f"beam_search_decode: Ids[{k}] must have 2 LoD levels, given {len(lod)}"
            )
        steps.append((arr.reshape(-1).tolist(), _plain(scores).reshape(-1).tolist(), _parents(lod)))
        sources.append(_source_of_rows(lod))
    n_src = len(id_steps[0]._lod[0]) - 1
    last = {}  # source -> the last step where it still had branches
    for t, src in enumerate(sources):
        for s in src:
            last[s] = t
    sent_ids, sent_scores, counts, lengths = [], [], [], []
    for s in range(n_src):
        found = []
        if s in last:
            t = last[s]
            found = [
                _trace(steps, t, r, attrs["end_id"]) for r, rs in enumerate(sources[t]) if rs == s
            ]
        found.sort(key=lambda f: -f[1][-1])
        found = found[: attrs["beam_size"]]
        counts.append(len(found))
        for toks, scs in found:
            sent_ids += toks
            sent_scores += scs
            lengths.append(len(toks))
    top, bottom = [0], [0]
    for c in counts:
        top.append(top[-1] + c)
    for n in lengths:
        bottom.append(bottom[-1] + n)
    id_dtype = id_steps[0]._array.dtype
    score_dtype = _plain(score_steps[0]).dtype
    return {
        "SentenceIds": LoDTensor(xp.asarray(sent_ids, dtype=id_dtype), [top, bottom]),
        "SentenceScores": LoDTensor(xp.asarray(sent_scores, dtype=score_dtype), [top, bottom]),
    }
