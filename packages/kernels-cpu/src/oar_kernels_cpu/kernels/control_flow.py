"""Kernels of the control-flow family: ``is_empty``, ``split_lod_tensor``, ``merge_lod_tensor``.

``while`` and ``conditional_block`` run sub-blocks and are executed by the
executor itself (``oar.executor.block_ops``), not by kernels.
"""

from __future__ import annotations

from oar_kernels_cpu.kernels import array_module, kernel

xp = array_module(__name__)


@kernel("is_empty")
def is_empty(inputs, attrs):
    return {"Out": xp.asarray([inputs["X"].size == 0])}


def _mask(m):
    m = m.reshape(-1)
    return m if m.dtype == bool else m.astype(bool)


@kernel("split_lod_tensor")
def split_lod_tensor(inputs, attrs):
    x, m = inputs["X"], _mask(inputs["Mask"])
    if m.shape[0] != x.shape[0]:
        raise ValueError(f"split_lod_tensor: Mask has {m.shape[0]} rows, X has {x.shape[0]}")
    return {"OutTrue": x[m], "OutFalse": x[~m]}


@kernel("merge_lod_tensor")
def merge_lod_tensor(inputs, attrs):
    t, f, m = inputs["InTrue"], inputs["InFalse"], _mask(inputs["Mask"])
    n_true = int(m.sum())
    if t.shape[0] != n_true or f.shape[0] != m.shape[0] - n_true:
        raise ValueError(
            f"merge_lod_tensor: Mask selects {n_true} of {m.shape[0]} rows, but InTrue has "
            f"{t.shape[0]} and InFalse {f.shape[0]}"
        )
    out = xp.empty((m.shape[0],) + tuple(t.shape[1:]), dtype=t.dtype)
    out[m] = t
    out[~m] = f
    return {"Out": out}
