"""numpy kernels of the rank-table family (``DynamicRNN``'s time-major views of LoD input)."""

from __future__ import annotations

import numpy as np
from oar.api import LoDTensor

from oar_kernels_cpu.kernels import array_module, kernel

xp = array_module(__name__)


class RankTable:
    """Sequences of a LoD level sorted by length, longest first (ties keep their order).

    ``items``: ``[(sequence index, length), ...]``; ``offsets``: the level's offsets;
    ``sub``: the LoD levels below it (empty for the last level); ``units[t]``: the items
    (indices at the table's level) of time step ``t`` for the sequences still running, in
    rank order; ``rows[t]``: their rows; ``lods[t]``: that step's LoD (the sub-levels of its
    items: a 2-level input gives 1-level steps), None without. Without sub-levels items are
    rows.
    """

    __slots__ = ("items", "offsets", "sub", "units", "rows", "lods")

    def __init__(self, offsets: list, sub: list | tuple = ()) -> None:
        lengths = [b - a for a, b in zip(offsets, offsets[1:])]
        self.offsets = list(offsets)
        self.sub = [list(level) for level in sub]
        self.items = sorted(enumerate(lengths), key=lambda kv: -kv[1])
        longest = self.items[0][1] if self.items else 0
        self.units, self.rows, self.lods = [], [], []
        for t in range(longest):
            units = [offsets[i] + t for i, n in self.items if n > t]
            rows, lod = _unit_rows(units, self.sub)
            self.units.append(np.asarray(units, dtype=np.int64))
            self.rows.append(rows)
            self.lods.append(lod or None)

    def active(self, t: int) -> int:
        return len(self.units[t]) if t < len(self.units) else 0

    def per_unit(self, n_rows: int) -> bool:
        """Whether a tensor of ``n_rows`` rows has one row per item (a step output computed
        per sequence of a nested input) rather than the items' rows."""
        return bool(self.sub) and n_rows == self.offsets[-1]

    @property
    def lod(self) -> list:
        """The LoD of the whole tensor, from the table's level down."""
        return [list(self.offsets)] + [list(level) for level in self.sub]

    def __repr__(self) -> str:
        return f"RankTable({self.items})"


def _unit_rows(units: list, sub: list) -> tuple:
    """The rows of ``units`` (indices at the table's level) and the LoD of those rows."""
    ranges = [(u, u + 1) for u in units]
    lod = []
    for level in sub:
        offs = [0]
        for a, b in ranges:
            for j in range(a, b):
                offs.append(offs[-1] + level[j + 1] - level[j])
        lod.append(offs)
        ranges = [(level[a], level[b]) for a, b in ranges]
    if not sub:
        return np.asarray(units, dtype=np.int64), lod
    parts = [np.arange(a, b, dtype=np.int64) for a, b in ranges]
    return (np.concatenate(parts) if parts else np.zeros(0, np.int64)), lod


def _plain(v):
    return v._array if isinstance(v, LoDTensor) else v


def _levels(x, level: int, op: str) -> list:
    if not isinstance(x, LoDTensor) or not x._lod:
        raise ValueError(f"{op}: X must be a LoDTensor with LoD (a sequence input)")
    if level >= len(x._lod):
        raise ValueError(f"{op}: level {level} is past X's {len(x._lod)} LoD levels")
    return x._lod[level:]


@kernel("lod_rank_table", lod=True, generic=False)
def lod_rank_table(inputs, attrs):
    levels = _levels(inputs["X"], attrs["level"], "lod_rank_table")
    return {"Out": RankTable(levels[0], levels[1:])}


@kernel("max_sequence_len", generic=False)
def max_sequence_len(inputs, attrs):
    return {"Out": np.asarray([len(inputs["RankTable"].rows)], dtype=np.int64)}


@kernel("lod_tensor_to_array", lod=True, generic=False)
def lod_tensor_to_array(inputs, attrs):
    x, table = _plain(inputs["X"]), inputs["RankTable"]
    if table.per_unit(x.shape[0]):
        return {"Out": [x[units] for units in table.units]}
    return {
        "Out": [
            x[rows] if lod is None else LoDTensor(x[rows], lod)
            for rows, lod in zip(table.rows, table.lods)
        ]
    }


def _whole_rows(items: list, table: RankTable) -> bool:
    """Whether the items hold their sequences' rows (items with LoD, or as many rows), rather
    than one row per sequence of a nested input (the output then has the table's level only)."""
    if not table.sub:
        return True
    t, item = next((t, v) for t, v in enumerate(items) if v is not None)
    if isinstance(item, LoDTensor):
        return True
    return t < len(table.rows) and _plain(item).shape[0] == len(table.rows[t]) != len(
        table.units[t]
    )


@kernel("array_to_lod_tensor", lod=True, generic=False)
def array_to_lod_tensor(inputs, attrs):
    items, table = inputs["X"], inputs["RankTable"]
    first = next((_plain(v) for v in items if v is not None), None)
    if first is None:
        raise ValueError("array_to_lod_tensor: the array holds no tensor")
    whole = _whole_rows(items, table)
    n_rows = table.sub[-1][-1] if whole and table.sub else table.offsets[-1]
    out = np.zeros((n_rows,) + first.shape[1:], dtype=first.dtype)
    at = table.rows if whole else table.units
    for t, rows in enumerate(at):
        if t < len(items) and items[t] is not None:
            out[rows] = _plain(items[t])
    return {"Out": LoDTensor(out, table.lod if whole else [list(table.offsets)])}


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
