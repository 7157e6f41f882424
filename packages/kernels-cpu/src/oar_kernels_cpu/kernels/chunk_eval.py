"""numpy kernel of chunk_eval: chunks extracted per sequence with the conlleval rules.

Numpy-only (``generic=False``): a scan over host tag sequences.
"""

from __future__ import annotations

import numpy as np

from oar_kernels_cpu.kernels import kernel
from oar_kernels_cpu.kernels._sequence import array_of, last_level

# per scheme: tag positions per chunk type and the position of (begin, inside, end, single)
_SCHEMES = {
    "IOB": (2, (0, 1, -1, -1)),
    "IOE": (2, (-1, 0, 1, -1)),
    "IOBES": (4, (0, 1, 2, 3)),
    "plain": (1, (-1, -1, -1, -1)),
}


def _ends(prev_tag, prev_type, tag, type_, other, tags) -> bool:
    begin, inside, end, single = tags
    if prev_type == other:
        return False
    if type_ == other or type_ != prev_type:
        return True
    if prev_tag in (begin, inside):
        return tag in (begin, single)
    return prev_tag in (end, single)


def _begins(prev_tag, prev_type, tag, type_, other, tags) -> bool:
    begin, inside, end, single = tags
    if prev_type == other:
        return type_ != other
    if type_ == other:
        return False
    if type_ != prev_type:
        return True
    if tag in (begin, single):
        return True
    if tag in (inside, end):
        return prev_tag in (end, single)
    return False


def chunks(seq: np.ndarray, num_types: int, scheme: str, excluded: set) -> set:
    """{(start, end, type)} of one tag sequence."""
    n_pos, tags = _SCHEMES[scheme]
    other = num_types
    found = set()
    start, prev_tag, prev_type = None, -1, other
    for i, t in enumerate(seq.tolist() + [other * n_pos]):
        t = int(t)
        tag, type_ = (t % n_pos, t // n_pos) if 0 <= t < other * n_pos else (-1, other)
        if start is not None and _ends(prev_tag, prev_type, tag, type_, other, tags):
            if prev_type not in excluded:
                found.add((start, i - 1, prev_type))
            start = None
        if _begins(prev_tag, prev_type, tag, type_, other, tags):
            start = i
        prev_tag, prev_type = tag, type_
    return found


def _sequences(inputs, slot: str) -> list:
    if inputs.get("SeqLength") is not None:
        x = array_of(inputs[slot])
        lens = array_of(inputs["SeqLength"]).reshape(-1).astype(np.int64)
        return [x[i].reshape(-1)[:n] for i, n in enumerate(lens)]
    x, off, _ = last_level(inputs[slot], "chunk_eval", slot)
    flat = x.reshape(-1)
    return [flat[a:b] for a, b in zip(off[:-1], off[1:])]


@kernel("chunk_eval", ("int32", "int64"), lod=True, generic=False)
def chunk_eval(inputs, attrs):
    args = (attrs["num_chunk_types"], attrs["chunk_scheme"], set(attrs["excluded_chunk_types"]))
    n_infer = n_label = n_correct = 0
    for inf, lab in zip(_sequences(inputs, "Inference"), _sequences(inputs, "Label")):
        a, b = chunks(inf, *args), chunks(lab, *args)
        n_infer, n_label, n_correct = n_infer + len(a), n_label + len(b), n_correct + len(a & b)
    precision = n_correct / n_infer if n_infer else 0.0
    recall = n_correct / n_label if n_label else 0.0
    f1 = 2 * precision * recall / (precision + recall) if n_correct else 0.0
    return {
        "Precision": np.array([precision], np.float32),
        "Recall": np.array([recall], np.float32),
        "F1-Score": np.array([f1], np.float32),
        "NumInferChunks": np.array([n_infer], np.int64),
        "NumLabelChunks": np.array([n_label], np.int64),
        "NumCorrectChunks": np.array([n_correct], np.int64),
    }
