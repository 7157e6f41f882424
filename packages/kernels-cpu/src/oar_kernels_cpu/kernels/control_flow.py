"""Kernels of the control-flow family: ``is_empty``, ``split_lod_tensor``, ``merge_lod_tensor``.

``while`` and ``conditional_block`` run sub-blocks and are executed by the
executor itself (``oar.executor.block_ops``), not by kernels.
"""

from __future__ import annotations

from oar.api import LoDTensor

from oar_kernels_cpu.kernels import array_module, kernel

xp = array_module(__name__)


@kernel("is_empty")
def is_empty(inputs, attrs):
    return {"Out": xp.asarray([inputs["X"].size == 0])}


def _mask(m):
    m = m.reshape(-1)
    return m if m.dtype == bool else m.astype(bool)


def _plain(v):
    return v._array if isinstance(v, LoDTensor) else v


def _lod(v) -> list:
    return list(v._lod) if isinstance(v, LoDTensor) and v._lod else []


def _sequences(lod: list, level: int, picked) -> tuple:
    """(rows, LoD) of the sequences ``picked`` (indices at LoD ``level``), in order."""
    ranges = [(int(i), int(i) + 1) for i in picked]
    out_lod = []
    for lv in lod[level:]:
        offs = [0]
        for a, b in ranges:
            offs.append(offs[-1] + lv[b] - lv[a])
        out_lod.append(offs)
        ranges = [(lv[a], lv[b]) for a, b in ranges]
    parts = [xp.arange(a, b) for a, b in ranges]
    rows = xp.concatenate(parts) if parts else xp.zeros(0, dtype=xp.int64)
    return rows, out_lod


def _per_sequence(lod: list, level: int, n_mask: int, n_rows: int, op: str) -> bool:
    """Whether a mask of ``n_mask`` values selects whole sequences of LoD ``level`` (rather
    than rows)."""
    if n_mask == n_rows:
        return False
    if lod and level < len(lod) and len(lod[level]) - 1 == n_mask:
        return True
    raise ValueError(
        f"{op}: Mask has {n_mask} values; it must have one per row of X ({n_rows})"
        + (f" or one per sequence ({len(lod[level]) - 1})" if lod and level < len(lod) else "")
    )


@kernel("split_lod_tensor", lod=True)
def split_lod_tensor(inputs, attrs):
    x, m = _plain(inputs["X"]), _mask(_plain(inputs["Mask"]))
    lod, level = _lod(inputs["X"]), int(attrs.get("level", 0))
    if not _per_sequence(lod, level, m.shape[0], x.shape[0], "split_lod_tensor"):
        return {"OutTrue": x[m], "OutFalse": x[~m]}
    out = {}
    for slot, picked in (("OutTrue", xp.nonzero(m)[0]), ("OutFalse", xp.nonzero(~m)[0])):
        rows, part_lod = _sequences(lod, level, picked)
        out[slot] = LoDTensor(x[rows], part_lod)
    return out


@kernel("merge_lod_tensor_grad", lod=True)
def merge_lod_tensor_grad(inputs, attrs):
    """Out@GRAD split as the merge joined it: by rows, or by X's sequences."""
    g, m = _plain(inputs["Out@GRAD"]), _mask(_plain(inputs["Mask"]))
    lod, level = _lod(inputs["X"]), int(attrs.get("level", 0))
    if not _per_sequence(lod, level, m.shape[0], g.shape[0], "merge_lod_tensor_grad"):
        return {"InTrue@GRAD": g[m], "InFalse@GRAD": g[~m]}
    t_rows, _ = _sequences(lod, level, xp.nonzero(m)[0])
    f_rows, _ = _sequences(lod, level, xp.nonzero(~m)[0])
    return {"InTrue@GRAD": g[t_rows], "InFalse@GRAD": g[f_rows]}


@kernel("merge_lod_tensor", lod=True)
def merge_lod_tensor(inputs, attrs):
    t, f = _plain(inputs["InTrue"]), _plain(inputs["InFalse"])
    m = _mask(_plain(inputs["Mask"]))
    n_true = int(m.sum())
    if t.shape[0] == n_true and f.shape[0] == m.shape[0] - n_true:
        out = xp.empty((m.shape[0],) + tuple(t.shape[1:]), dtype=t.dtype)
        out[m] = t
        out[~m] = f
        return {"Out": out}
    lod, level = _lod(inputs.get("X")), int(attrs.get("level", 0))
    if not lod or level >= len(lod) or len(lod[level]) - 1 != m.shape[0]:
        raise ValueError(
            f"merge_lod_tensor: Mask selects {n_true} of {m.shape[0]} rows, but InTrue has "
            f"{t.shape[0]} and InFalse {f.shape[0]}"
        )
    t_rows, _ = _sequences(lod, level, xp.nonzero(m)[0])
    f_rows, _ = _sequences(lod, level, xp.nonzero(~m)[0])
    if t.shape[0] != t_rows.shape[0] or f.shape[0] != f_rows.shape[0]:
        raise ValueError(
            f"merge_lod_tensor: Mask selects {n_true} of {m.shape[0]} sequences, of "
            f"{t_rows.shape[0]} and {f_rows.shape[0]} rows, but InTrue has {t.shape[0]} rows "
            f"and InFalse {f.shape[0]}"
        )
    out = xp.empty((t.shape[0] + f.shape[0],) + tuple(t.shape[1:]), dtype=t.dtype)
    out[t_rows] = t
    out[f_rows] = f
    return {"Out": LoDTensor(out, [list(v) for v in lod[level:]])}
