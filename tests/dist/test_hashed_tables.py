"""Hashed distributed tables without a network: the shard rule, the id -> slot map, rows drawn
per id, a pserver's table shards (prefetch, gradients, a full shard) and keyed rows on the wire."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("zmq")
pytest.importorskip("oar_dist")

from oar import fluid
from oar.api import SelectedRows
from oar_dist.pserver import wire
from oar_dist.pserver.hashed import SlotMap, TableFull, capacity, shard_of
from oar_dist.pserver.row_init import RowInitError, init_rows, spec
from oar_dist.pserver.table_shards import ShardRefused, TableShards

ODD = np.array([10**12 + 7, -5, 2**62, -(2**63), 2**63 - 1, 0, 3], dtype="int64")


def test_shard_of_is_fixed_and_spreads_patterned_ids():
    np.testing.assert_array_equal(shard_of(ODD, 3), shard_of(ODD.copy(), 3))
    assert set(shard_of(ODD, 3).tolist()) <= {0, 1, 2}
    assert not shard_of(ODD, 1).any()
    evens = np.arange(0, 40000, 2, dtype="int64")  # id % 2 would put them all on pserver 0
    counts = np.bincount(shard_of(evens, 2), minlength=2)
    assert abs(counts[0] - counts[1]) < 0.05 * evens.size
    # the headroom covers the spread of random ids
    cap = capacity(100_000, 4)
    rnd = np.random.default_rng(0).integers(-(2**63), 2**63 - 1, 100_000, dtype="int64")
    assert np.bincount(shard_of(rnd, 4)).max() <= cap


def test_capacity_is_a_share_with_headroom():
    assert capacity(7, 2) == 7  # never more than dict_size
    assert capacity(1_000_000, 2) == 550_064


def test_slot_map_allocates_in_arrival_order_and_survives_its_store():
    store = np.zeros(6, dtype="int64")
    m = SlotMap(store)
    slots, new, new_slots = m.slots_for(np.array([2**62, -5, 2**62], dtype="int64"))
    assert new.tolist() == [-5, 2**62] and new_slots.tolist() == [0, 1]
    assert slots.tolist() == [1, 0, 1]
    slots, new, _ = m.slots_for(np.array([7, -5], dtype="int64"))
    assert slots.tolist() == [2, 0] and new.tolist() == [7]
    assert store.tolist() == [3, -5, 2**62, 7, 0, 0]  # count, then the id of each slot
    again = SlotMap(store.copy())  # a map loaded from a checkpoint finds the same slots
    np.testing.assert_array_equal(again.find(np.array([7, 2**62, -5, 1])), [2, 1, 0, -1])
    with pytest.raises(TableFull, match="capacity of 5"):
        m.slots_for(np.arange(100, 103, dtype="int64"))
    assert m.count == 3 and store[0] == 3  # nothing allocated by the refused batch


def test_slot_map_merges_its_recent_index():
    m = SlotMap(np.zeros(5001, dtype="int64"))
    rng = np.random.default_rng(1)
    ids = rng.choice(np.arange(-(10**9), 10**9, 1000, dtype="int64"), 5000, replace=False)
    for part in np.array_split(ids, 7):  # crosses the merge threshold
        m.slots_for(part)
    slots = m.find(ids)
    np.testing.assert_array_equal(np.sort(slots), np.arange(5000))  # each id its own slot
    np.testing.assert_array_equal(m.ids()[slots], ids)  # ... the one the store says
    np.testing.assert_array_equal(SlotMap(m.store.copy()).find(ids), slots)
    assert m.find(np.array([1], dtype="int64")).tolist() == [-1]


def _uniform_spec(seed=0):
    return spec("uniform_random", {"min": -0.5, "max": 0.5, "seed": seed, "shape": [9, 4]}, "emb")


def test_rows_depend_on_the_id_alone():
    s = _uniform_spec()
    a = init_rows(s, ODD, 4, "float32")
    b = init_rows(s, ODD[::-1], 4, "float32")[::-1]
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(init_rows(s, ODD[2:3], 4, "float32"), a[2:3])
    assert a.dtype == np.float32 and (a >= -0.5).all() and (a < 0.5).all()
    assert len({tuple(r) for r in a.tolist()}) == len(ODD)
    assert not np.array_equal(init_rows(_uniform_spec(seed=3), ODD, 4, "float32"), a)


def test_rows_follow_the_initializers_distribution():
    ids = np.arange(20000, dtype="int64")
    u = init_rows(_uniform_spec(), ids, 8, "float64")
    assert abs(u.mean()) < 0.01 and abs(u.var() - 1 / 12) < 0.005
    g = init_rows(spec("gaussian_random", {"mean": 1.0, "std": 2.0}, "e"), ids, 8, "float64")
    assert abs(g.mean() - 1.0) < 0.03 and abs(g.std() - 2.0) < 0.03
    t = init_rows(spec("truncated_gaussian_random", {"std": 1.0}, "e"), ids, 8, "float64")
    assert np.abs(t).max() <= 2.0 and 0.8 < t.std() < 0.9
    c = init_rows(spec("fill_constant", {"value": 0.25}, "e"), ids[:3], 2, "float32")
    np.testing.assert_array_equal(c, np.full((3, 2), 0.25, "float32"))


def test_array_initializer_rows_and_ids_it_cannot_place():
    table = np.arange(12, dtype="float32").reshape(3, 4)
    s = spec("assign_value", {"shape": [3, 4], "fp32_values": table.ravel().tolist()}, "emb")
    np.testing.assert_array_equal(init_rows(s, np.array([2, 0]), 4, "float32"), table[[2, 0]])
    with pytest.raises(RowInitError, match=r"'emb' .* no row for ids \[-5\]"):
        init_rows(s, np.array([1, -5]), 4, "float32")


def test_other_initializers_are_refused():
    with pytest.raises(NotImplementedError, match="'emb'.*'bilinear_interp'"):
        spec("bilinear_interp", {}, "emb")


def _shards(cap=4):
    scope = fluid.Scope()
    scope.var("emb.block0").get_tensor().set(np.zeros((cap, 2), "float32"), fluid.CPUPlace())
    scope.var("emb.block0@IDS").get_tensor().set(np.zeros(cap + 1, "int64"), fluid.CPUPlace())
    s = {"name": "emb.block0", "grad": "emb@GRAD.block0", "ids": "emb.block0@IDS"}
    s.update(capacity=cap, shard=0, shards=1, table="emb", init=_uniform_spec())
    return TableShards(json.dumps([s]), scope, "127.0.0.1:1"), scope


def test_table_shards_prefetch_translate_and_refuse_when_full():
    shards, scope = _shards()
    ids = np.array([10**12 + 7, -5], dtype="int64")
    rows = shards.prefetch("emb.block0", ids, 0)
    np.testing.assert_array_equal(rows, init_rows(_uniform_spec(), ids, 2, "float32"))
    g = shards.translate("emb@GRAD.block0", SelectedRows([-5, -5, 9], wire.KEYED, np.ones((3, 2))))
    assert g.rows() == [0, 0, 2] and g.height() == 4  # slots of the shard (new ids: in order)
    saved = np.array(scope.find_var("emb.block0@IDS").get_tensor())
    assert saved[:4].tolist() == [3, -5, 10**12 + 7, 9]  # the map is the variable saved
    with pytest.raises(ShardRefused, match=r"distributed table 'emb' is full .*capacity of 4"):
        shards.prefetch("emb.block0", np.array([1, 2], dtype="int64"), 0)
    shards.check_grad("emb@GRAD.block0", SelectedRows([1], wire.KEYED, np.ones((1, 2))))
    with pytest.raises(ShardRefused, match="must be rows keyed by id"):
        shards.check_grad("emb@GRAD.block0", np.ones((4, 2)))
    with pytest.raises(ShardRefused, match="dense or row-block"):
        shards.check_grad("w@GRAD", SelectedRows([1], wire.KEYED, np.ones((1, 2))))


def test_keyed_rows_cross_the_wire_and_plain_rows_stay_checked():
    value = np.ones((3, 2), "float32")
    msg = wire.Message(wire.SEND, tensors=(("g", SelectedRows(ODD[:3], wire.KEYED, value)),))
    ((_, got),) = wire.decode(wire.encode(msg)).tensors
    assert got.height() == wire.KEYED and got.rows() == ODD[:3].tolist()
    bad = wire.Message(wire.SEND, tensors=(("g", SelectedRows([5], 3, value[:1])),))
    with pytest.raises(wire.WireError, match="outside"):
        wire.decode(wire.encode(bad))
    empty = wire.Message(wire.SEND, tensors=(("g", SelectedRows([], wire.KEYED, value[:0])),))
    ((_, got),) = wire.decode(wire.encode(empty)).tensors
    assert got.value.shape == (0, 2)
