"""filter_by_instag: keep the instances whose tags meet the filter (host code over the LoD)."""

from __future__ import annotations

import numpy as np
from oar.api import LoDTensor

from oar_kernels_cpu.kernels import NUMERIC, array_module, kernel

xp = array_module(__name__)


def _arr(t):
    return np.asarray(t._array if isinstance(t, LoDTensor) else t)


def _offsets(t, rows):
    lod = getattr(t, "_lod", None)
    return [int(o) for o in lod[-1]] if lod else list(range(rows + 1))


@kernel("filter_by_instag", NUMERIC, lod=True, generic=False)
def filter_by_instag(inputs, attrs):
    x = _arr(inputs["Ins"])
    tags_t = inputs["Ins_tag"]
    tags = _arr(tags_t).reshape(-1)
    tag_off = _offsets(tags_t, tags.size)
    wanted = set(_arr(inputs["Filter_tag"]).reshape(-1).tolist())
    ins_off = (
        _offsets(inputs["Ins"], x.shape[0]) if attrs["is_lod"] else list(range(x.shape[0] + 1))
    )
    rows, lengths = [], []
    for i in range(len(ins_off) - 1):
        if wanted.intersection(tags[tag_off[i] : tag_off[i + 1]].tolist()):
            rows.extend(range(ins_off[i], ins_off[i + 1]))
            lengths.append(ins_off[i + 1] - ins_off[i])
    if not rows:
        out = np.full((1,) + x.shape[1:], attrs["out_val_if_empty"], x.dtype)
        return {
            "Out": LoDTensor(out, [[0, 1]]),
            "LossWeight": np.zeros((1, 1), x.dtype),
            "IndexMap": np.full((1, 1), -1, np.int64),
        }
    offsets = np.concatenate([[0], np.cumsum(lengths)]).tolist()
    return {
        "Out": LoDTensor(x[rows], [offsets]),
        "LossWeight": np.ones((len(lengths), 1), x.dtype),
        "IndexMap": np.asarray(rows, np.int64).reshape(-1, 1),
    }


@kernel("filter_by_instag_grad", ("float32", "float64"), lod=True, generic=False)
def filter_by_instag_grad(inputs, attrs):
    x = _arr(inputs["Ins"])
    idx = _arr(inputs["IndexMap"]).reshape(-1)
    d = _arr(inputs["Out@GRAD"])
    g = np.zeros_like(x)
    keep = idx >= 0
    np.add.at(g, idx[keep], d[keep])
    return {"Ins@GRAD": g}
