"""The hashed table shards a pserver holds (the pserver half of :mod:`oar_dist.pserver.hashed`).

``listen_and_serv``'s ``table_specs`` attr (JSON) lists, per shard: its row variable ``name``,
its gradient ``grad``, the map variable ``ids``, ``capacity``, ``shard`` / ``shards``, and the
initialiser ``init`` (:func:`oar_dist.pserver.row_init.spec`). ``PREFETCH`` of ids gives their
rows (allocating and initialising the new ones); a gradient arrives with ids as rows
(``SelectedRows`` of height :data:`wire.KEYED`) and leaves with slots as rows, so the optimizer's
SelectedRows kernels update those slots, and per-row optimizer state (moments, the same shape as
the rows) stays in slot order with them.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
from oar.api import SelectedRows

from oar_dist.pserver import wire
from oar_dist.pserver.hashed import SlotMap, TableFull, shard_of
from oar_dist.pserver.row_init import RowInitError, init_rows


class ShardRefused(Exception):
    """A table request this pserver answers with an error."""


def _array(value: Any) -> Any:
    return getattr(value, "_array", value)


class TableShards:
    def __init__(self, specs: str, scope: Any, endpoint: str) -> None:
        self.specs = {s["name"]: s for s in (json.loads(specs) if specs else [])}
        self.by_grad = {s["grad"]: s["name"] for s in self.specs.values()}
        self.scope, self.endpoint = scope, endpoint
        self.maps: dict = {}
        for name, s in self.specs.items():
            var = scope.find_var(s["ids"])
            if var is None:
                raise ValueError(
                    f"listen_and_serv: the table shard '{name}' has no map '{s['ids']}'"
                )
            store = np.array(_array(var.value), dtype=np.int64).reshape(-1)
            if store.size != s["capacity"] + 1:
                raise ValueError(
                    f"listen_and_serv: the map '{s['ids']}' of table shard '{name}' holds "
                    f"{store.size - 1} slots, the shard's capacity is {s['capacity']} (a "
                    f"checkpoint of a job with another dict_size or number of pservers?)"
                )
            from oar.api import LoDTensor

            var.value = LoDTensor(store)  # the map writes new ids here: saving it saves the map
            self.maps[name] = SlotMap(store)
            self._check_shard(name, self.maps[name].ids())

    def _check_shard(self, name: str, ids: np.ndarray) -> None:
        s = self.specs[name]
        wrong = ids[shard_of(ids, s["shards"]) != s["shard"]]
        if wrong.size:
            raise ShardRefused(
                f"ids {wrong[:5].tolist()} of distributed table '{s['table']}' belong to another "
                f"pserver than {self.endpoint} (shard {s['shard']} of {s['shards']})"
            )

    def rows(self, name: str) -> np.ndarray:
        return _array(self.scope.find_var(name).value)

    def slots(self, name: str, ids: np.ndarray, trainer: int) -> np.ndarray:
        """Slots of ``ids``; new ids get a slot and their initial row."""
        s, smap = self.specs[name], self.maps[name]
        try:
            slots, new_ids, new_slots = smap.slots_for(ids)
        except TableFull as exc:
            raise ShardRefused(
                f"distributed table '{s['table']}' is full on pserver {self.endpoint}: {exc} "
                f"(shard {s['shard']} of {s['shards']}; the embedding's dict_size bounds the "
                f"number of distinct ids, so raise it)"
            ) from None
        if new_ids.size:
            self._check_shard(name, new_ids)
            table = self.rows(name)
            try:
                table[new_slots] = init_rows(s["init"], new_ids, table.shape[1], table.dtype)
            except RowInitError as exc:
                smap.store[0] -= new_ids.size  # nothing allocated after all
                self.maps[name] = SlotMap(smap.store)
                raise ShardRefused(str(exc)) from None
        return slots

    def prefetch(self, name: str, ids: np.ndarray, trainer: int) -> np.ndarray:
        return np.take(self.rows(name), self.slots(name, ids, trainer), axis=0)

    def check_grad(self, name: str, value: Any) -> None:
        keyed = isinstance(value, SelectedRows) and value.height() == wire.KEYED
        if (name in self.by_grad) != keyed:
            what = "rows keyed by id" if name in self.by_grad else "a dense or row-block gradient"
            raise ShardRefused(f"the gradient '{name}' must be {what}")

    def translate(self, grad: str, value: SelectedRows, trainer: int = -1) -> SelectedRows:
        """The gradient with ids as rows -> the same rows as slots of the shard."""
        name = self.by_grad[grad]
        slots = self.slots(name, value.row_array, trainer)
        return SelectedRows(slots, self.specs[name]["capacity"], value.value)
