"""Hashed, growable distributed tables: which pserver holds an id, and where its row is.

A distributed table (``embedding(..., is_distributed=True)``) accepts any int64 id, as long as
there are at most ``dict_size`` distinct ids. Its rows are spread over the pservers by a mix of
the id (:func:`shard_of`, the splitmix64 finaliser modulo the number of shards), so that ids
with a pattern (all even, multiples of the pserver count) still spread evenly. Each shard keeps
a row array of its :func:`capacity` and an id -> slot map (:class:`SlotMap`): a row is
allocated in the next free slot the first time its id arrives (prefetch or gradient) and
initialised from the table's initialiser, drawn for that id alone (:mod:`row_init`).

The map lives in an int64 variable ``<shard>@IDS`` of ``capacity + 1`` elements: element 0
is the number of slots used, element ``1 + s`` the id held in slot ``s``. Checkpoints save and
load it like any persistable, so a resumed pserver finds its rows where it left them.
"""

from __future__ import annotations

import math

import numpy as np

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31 = np.uint64(30), np.uint64(27), np.uint64(31)


def mix64(z: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser on a uint64 array (a bijection; wraps modulo 2**64)."""
    z = z ^ (z >> _S30)
    z = z * _M1
    z = z ^ (z >> _S27)
    z = z * _M2
    return z ^ (z >> _S31)


def shard_of(ids: np.ndarray, shards: int) -> np.ndarray:
    """The shard (pserver index) of each int64 id: ``mix64(id) % shards``."""
    ids = np.ascontiguousarray(ids, dtype=np.int64)
    if shards == 1:
        return np.zeros(ids.shape, dtype=np.int64)
    return (mix64(ids.view(np.uint64)) % np.uint64(shards)).astype(np.int64)


def capacity(dict_size: int, shards: int) -> int:
    """Rows one shard holds: its share of ``dict_size`` with headroom for an uneven spread
    (a tenth more, plus 64 rows: ids spread by :func:`shard_of` land within a few standard
    deviations of an even share, and that is far inside), never more than ``dict_size``."""
    return int(min(dict_size, math.ceil(dict_size * 1.1 / shards) + 64))


def ids_name(shard: str) -> str:
    """The variable that holds the id -> slot map of the table shard ``shard``."""
    return shard + "@IDS"


class TableFull(Exception):
    """More distinct ids arrived than a shard's capacity."""


class SlotMap:
    """id -> slot of one table shard, vectorised: a sorted main index and a small sorted index of
    recent ids (merged into the main one when it grows past an eighth of it), so a batch costs
    two ``searchsorted`` and no Python work per id.

    ``store`` is the ``<shard>@IDS`` array (``[count, id of slot 0, id of slot 1, ...]``); the map
    writes new ids into it, so saving that variable saves the map.
    """

    def __init__(self, store: np.ndarray) -> None:
        store = np.asarray(store)
        if store.dtype != np.int64 or store.ndim != 1 or store.size < 1:
            raise ValueError(
                f"a slot map must be a 1-D int64 array, given {store.dtype} {store.shape}"
            )
        count = int(store[0])
        if not 0 <= count <= store.size - 1:
            raise ValueError(
                f"a slot map of capacity {store.size - 1} says it holds {count} ids (corrupt?)"
            )
        self.store = store
        self.capacity = store.size - 1
        ids = store[1 : 1 + count]
        order = np.argsort(ids, kind="stable")
        self.keys, self.slots = ids[order], order.astype(np.int64)
        if count and (np.diff(self.keys) == 0).any():
            raise ValueError("a slot map holds an id twice (corrupt?)")
        self.new_keys = np.empty(0, np.int64)
        self.new_slots = np.empty(0, np.int64)

    @property
    def count(self) -> int:
        return int(self.store[0])

    def ids(self) -> np.ndarray:
        """The ids held, in slot order."""
        return self.store[1 : 1 + self.count]

    @staticmethod
    def _find(keys: np.ndarray, slots: np.ndarray, ids: np.ndarray, out: np.ndarray) -> None:
        if not keys.size:
            return
        pos = np.searchsorted(keys, ids)
        pos[pos == keys.size] = 0
        hit = keys[pos] == ids
        out[hit] = slots[pos[hit]]

    def find(self, ids: np.ndarray) -> np.ndarray:
        """The slot of each id, -1 for ids not held."""
        out = np.full(ids.shape, -1, dtype=np.int64)
        self._find(self.keys, self.slots, ids, out)
        self._find(self.new_keys, self.new_slots, ids, out)
        return out

    def slots_for(self, ids: np.ndarray) -> tuple:
        """Slots of ``ids`` (any int64, repeats allowed), allocating the ids not held yet.

        Returns ``(slots, new_ids, new_slots)``: the caller initialises the new rows. Raises
        :class:`TableFull` (allocating nothing) when the new ids do not fit.
        """
        ids = np.asarray(ids, dtype=np.int64).reshape(-1)
        if ids.size < 2 or bool((ids[1:] > ids[:-1]).all()):  # a prefetch: sorted, distinct
            uniq, inverse = ids, None
        else:
            uniq, inverse = np.unique(ids, return_inverse=True)
        got = self.find(uniq)
        missing = got < 0
        new_ids = uniq[missing]
        count = self.count
        if count + new_ids.size > self.capacity:
            raise TableFull(
                f"{new_ids.size} new ids would make {count + new_ids.size} rows, "
                f"over this shard's capacity of {self.capacity}"
            )
        new_slots = np.arange(count, count + new_ids.size, dtype=np.int64)
        if new_ids.size:
            got[missing] = new_slots
            self.store[1 + count : 1 + count + new_ids.size] = new_ids
            self.store[0] = count + new_ids.size
            self._insert(new_ids, new_slots)
        return (got if inverse is None else got[inverse.reshape(-1)]), new_ids, new_slots

    def _insert(self, ids: np.ndarray, slots: np.ndarray) -> None:
        """Add sorted ``ids`` (none held yet) to the recent index; merge when it grows."""
        pos = np.searchsorted(self.new_keys, ids)
        self.new_keys = np.insert(self.new_keys, pos, ids)
        self.new_slots = np.insert(self.new_slots, pos, slots)
        if self.new_keys.size > max(1024, self.keys.size // 8):
            pos = np.searchsorted(self.keys, self.new_keys)
            self.keys = np.insert(self.keys, pos, self.new_keys)
            self.slots = np.insert(self.slots, pos, self.new_slots)
            self.new_keys = np.empty(0, np.int64)
            self.new_slots = np.empty(0, np.int64)


def scatter_rows(ids: np.ndarray, rows: np.ndarray, dict_size: int, fill: np.ndarray) -> np.ndarray:
    """``fill`` (a ``[dict_size, ...]`` array) with ``rows[i]`` written at row ``ids[i]``: a
    shard's rows put back in id order, for a table whose ids all lie in ``[0, dict_size)``."""
    if ids.size and (ids.min() < 0 or ids.max() >= dict_size):
        raise ValueError(f"ids outside [0, {dict_size}) cannot be written at their rows")
    fill[ids] = rows
    return fill
