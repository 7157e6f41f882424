"""numpy kernels of edit_distance (one dynamic-programming row at a time) and sequence_erase.

Numpy-only (``generic=False``): dynamic programming over host LoD sequences; a device
plugin overrides them.
"""

from __future__ import annotations

import numpy as np
from oar.errors import ShapeError

from oar_kernels_cpu.kernels import kernel
from oar_kernels_cpu.kernels._sequence import array_of, last_level, segment_sum, with_lod


def levenshtein(a: np.ndarray, b: np.ndarray) -> int:
    """Insertions, deletions and substitutions that turn ``a`` into ``b``."""
    row = np.arange(len(b) + 1)
    for i in range(1, len(a) + 1):
        prev, row = row, np.empty_like(row)
        row[0] = i
        sub = prev[:-1] + (a[i - 1] != b)
        for j in range(1, len(b) + 1):
            row[j] = min(prev[j] + 1, row[j - 1] + 1, sub[j - 1])
    return int(row[-1])


def _sequences(inputs, slot: str, length_slot: str) -> list:
    if inputs.get(length_slot) is not None:
        x = array_of(inputs[slot])
        lens = array_of(inputs[length_slot]).reshape(-1).astype(np.int64)
        return [x[i].reshape(-1)[:n] for i, n in enumerate(lens)]
    x, off, _ = last_level(inputs[slot], "edit_distance", slot)
    flat = x.reshape(-1)
    return [flat[a:b] for a, b in zip(off[:-1], off[1:])]


@kernel("edit_distance", ("int32", "int64"), lod=True, generic=False)
def edit_distance(inputs, attrs):
    hyps = _sequences(inputs, "Hyps", "HypsLength")
    refs = _sequences(inputs, "Refs", "RefsLength")
    if len(hyps) != len(refs):
        raise ShapeError(f"edit_distance: {len(hyps)} hypotheses but {len(refs)} references")
    out = np.zeros((len(hyps), 1), np.float32)
    for i, (h, r) in enumerate(zip(hyps, refs)):
        d = levenshtein(h, r)
        if attrs["normalized"]:
            if len(r) == 0:
                raise ShapeError(f"edit_distance: reference {i} is empty; it cannot normalise")
            d = d / len(r)
        out[i, 0] = d
    return {"Out": out, "SequenceNum": np.array([len(hyps)], np.int64)}


@kernel("sequence_erase", ("int32", "int64"), lod=True, generic=False)
def sequence_erase(inputs, attrs):
    x, off, lod = last_level(inputs["X"], "sequence_erase", "X")
    flat = x.reshape(-1)
    keep = ~np.isin(flat, np.asarray(attrs["tokens"], dtype=flat.dtype))
    counts = segment_sum(keep.astype(np.int64)[:, None], off)[:, 0]
    new_off = np.concatenate([[0], np.cumsum(counts)]).tolist()
    return {"Out": with_lod(flat[keep].reshape(-1, 1), lod[:-1] + [new_off])}
