"""numpy kernels of the rank-table family (``DynamicRNN``'s time-major views of LoD input)."""

from __future__ import annotations

import numpy as np
from oar.api import LoDTensor

from oar_kernels_cpu.kernels import array_module, kernel

xp = array_module(__name__)


class RankTable:
    """Sequences of a LoD level sorted by length, longest first (ties keep their order).

    ``items``: ``[(sequence index, length), ...]``; ``offsets``: the level's offsets;
    ``rows[t]``: the rows of time step ``t`` for the sequences still running, in rank order.
    """

    __slots__ = ("items", "offsets", "rows")

    def __init__(self, offsets: list) -> None:
        lengths = [b - a for a, b in zip(offsets, offsets[1:])]
        self.offsets = list(offsets)
        self.items = sorted(enumerate(lengths), key=lambda kv: -kv[1])
        longest = self.items[0][1] if self.items else 0
        self.rows = [
            np.asarray([offsets[i] + t for i, n in self.items if n > t], dtype=np.int64)
            for t in range(longest)
        ]

    def active(self, t: int) -> int:
        return len(self.rows[t]) if t < len(self.rows) else 0

    def __repr__(self) -> str:
        return f"RankTable({self.items})"


def _plain(v):
    return v._array if isinstance(v, LoDTensor) else v


def _offsets(x, level: int, op: str) -> list:
    if not isinstance(x, LoDTensor) or not x._lod:
        raise ValueError(f"{op}: X must be a LoDTensor with LoD (a sequence input)")
    if level >= len(x._lod):
        raise ValueError(f"{op}: level {level} is past X's {len(x._lod)} LoD levels")
    return x._lod[level]


@kernel("lod_rank_table", lod=True, generic=False)
def lod_rank_table(inputs, attrs):
    return {"Out": RankTable(_offsets(inputs["X"], attrs["level"], "lod_rank_table"))}


@kernel("max_sequence_len", generic=False)
def max_sequence_len(inputs, attrs):
    return {"Out": np.asarray([len(inputs["RankTable"].rows)], dtype=np.int64)}


@kernel("lod_tensor_to_array", lod=True, generic=False)
def lod_tensor_to_array(inputs, attrs):
    x, table = _plain(inputs["X"]), inputs["RankTable"]
    return {"Out": [x[rows] for rows in table.rows]}


@kernel("array_to_lod_tensor", lod=True, generic=False)
def array_to_lod_tensor(inputs, attrs):
    items, table = inputs["X"], inputs["RankTable"]
    first = next((_plain(v) for v in items if v is not None), None)
    if first is None:
        raise ValueError("array_to_lod_tensor: the array holds no tensor")
    out = np.zeros((table.offsets[-1],) + first.shape[1:], dtype=first.dtype)
    for t, rows in enumerate(table.rows):
        if t < len(items) and items[t] is not None:
            out[rows] = _plain(items[t])
    return {"Out": LoDTensor(out, [list(table.offsets)])}


@kernel("shrink_rnn_memory", generic=False)
def shrink_rnn_memory(inputs, attrs):
    k = inputs["RankTable"].active(int(inputs["I"].reshape(-1)[0]))
    return {"Out": inputs["X"][:k]}


@kernel("shrink_rnn_memory_grad", generic=False)
def shrink_rnn_memory_grad(inputs, attrs):
    x = inputs["X"]
    g = np.zeros_like(x)
    dout = inputs.get("Out@GRAD")
    if dout is not None:
        g[: len(dout)] = dout
    return {"X@GRAD": g}


def _rank_order(table) -> np.ndarray:
    return np.asarray([i for i, _n in table.items], dtype=np.int64)


@kernel("reorder_lod_tensor_by_rank", generic=False)
def reorder_lod_tensor_by_rank(inputs, attrs):
    x, table = inputs["X"], inputs["RankTable"]
    if x.shape[0] != len(table.items):
        raise ValueError(
            f"reorder_lod_tensor_by_rank: X has {x.shape[0]} rows for {len(table.items)} sequences"
        )
    return {"Out": x[_rank_order(table)]}


@kernel("reorder_lod_tensor_by_rank_grad", generic=False)
def reorder_lod_tensor_by_rank_grad(inputs, attrs):
    g = inputs["Out@GRAD"]
    out = np.empty_like(g)
    out[_rank_order(inputs["RankTable"])] = g
    return {"X@GRAD": out}
