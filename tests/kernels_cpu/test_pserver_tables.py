"""The trainer-side gradient ops of distributed tables: ``distributed_lookup_table_grad`` (equal to
``lookup_table_grad`` with ``is_sparse``, which reads the table, with ids as rows),
``shard_selected_rows`` and ``split_selected_rows``.
``distributed_lookup_table`` itself runs against a pserver in ``test_pserver.py``."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("oar_dist")

from oar.api import SelectedRows, registries
from oar_dist.kernels.tables import (
    distributed_lookup_table_grad,
    prefetch_rows,
    scale_selected_rows,
    shard_selected_rows,
    split_selected_rows,
    table_shard_zeros,
)
from oar_dist.pserver.hashed import shard_of
from oar_dist.pserver.wire import KEYED

RNG = np.random.RandomState(7)
IDS = np.array([[3], [0], [6], [3], [2]], dtype="int64")
DOUT = RNG.rand(5, 4).astype("float32")


def _lookup_grad(padding_idx: int):
    entry = registries().kernels.lookup("lookup_table_grad", "cpu", "float32")
    w = np.zeros((7, 4), "float32")
    attrs = (
        registries()
        .ops.get("lookup_table_grad")
        .complete_attrs({"is_sparse": True, "padding_idx": padding_idx})
    )
    return entry.kernel({"W": w, "Ids": IDS, "Out@GRAD": DOUT}, attrs)["W@GRAD"]


@pytest.mark.parametrize("padding_idx", [-1, 3])
def test_grad_equals_lookup_table_grad(padding_idx):
    attrs = {"height": 7, "padding_idx": padding_idx, "lookup_table_version": 1}
    got = distributed_lookup_table_grad({"Ids": IDS, "Out@GRAD": DOUT}, attrs)["W@GRAD"]
    want = _lookup_grad(padding_idx)
    assert isinstance(got, SelectedRows) and got.height() == KEYED  # rows are ids
    dense = SelectedRows(got.row_array, 7, got.value).to_dense()
    np.testing.assert_array_equal(dense, want.to_dense())


def test_grad_keeps_ids_of_any_int64():
    ids = np.array([[2**62], [-5], [10**12 + 7]], dtype="int64")
    attrs = {"height": 3, "padding_idx": -1, "lookup_table_version": 1}
    got = distributed_lookup_table_grad({"Ids": ids, "Out@GRAD": DOUT[:3]}, attrs)["W@GRAD"]
    assert got.rows() == ids.ravel().tolist()


def test_shard_selected_rows_cuts_by_the_ids_shard():
    ids = np.array([3, 0, 6, 3, 2, -5, 2**62], dtype="int64")
    value = RNG.rand(7, 4).astype("float32")
    parts = shard_selected_rows({"X": SelectedRows(ids, KEYED, value)}, {"shards": 3})["Out"]
    assert len(parts) == 3 and all(p.height() == KEYED for p in parts)
    k = shard_of(ids, 3)
    for i, p in enumerate(parts):  # each id once, sorted, its values summed (3 came twice)
        assert p.rows() == sorted(set(ids[k == i].tolist()))
        for r, v in zip(p.rows(), p.value):
            np.testing.assert_allclose(v, value[ids == r].sum(axis=0), rtol=1e-6)
    assert sum(p.value.shape[0] for p in parts) == 6


def test_split_selected_rows_makes_block_local_rows():
    x = SelectedRows([3, 0, 6, 3, 2], 7, DOUT)
    parts = split_selected_rows({"X": x}, {"height_sections": [4, 3]})["Out"]
    assert [p.height() for p in parts] == [4, 3]
    assert parts[0].rows() == [3, 0, 3, 2] and parts[1].rows() == [2]
    dense = np.concatenate([p.to_dense() for p in parts])
    np.testing.assert_allclose(dense, x.to_dense())


def test_split_selected_rows_checks_the_sections():
    x = SelectedRows([1], 7, DOUT[:1])
    with pytest.raises(ValueError, match="add up to 6, X's height is 7"):
        split_selected_rows({"X": x}, {"height_sections": [4, 2]})


def test_prefetch_asks_nothing_for_no_ids():
    attrs = {"table_names": ["a", "b"], "endpoints": ["x:1", "y:2"]}
    out = prefetch_rows(
        np.zeros(0, np.int64), dict(attrs, trainer_id=0, emb_dim=4, dtype="float32")
    )
    assert out.shape == (0, 4)


def test_scale_selected_rows_scales_the_values_only():
    x = SelectedRows([2**62, -5, 2**62], KEYED, DOUT[:3])
    out = scale_selected_rows({"X": x, "Scale": np.array([0.5], "float32")}, {})["Out"]
    assert out.rows() == x.rows() and out.height() == KEYED
    np.testing.assert_allclose(out.value, DOUT[:3] * 0.5)
    assert out.value.dtype == np.float32
    with pytest.raises(ValueError, match="one value"):
        scale_selected_rows({"X": x, "Scale": np.ones(2, "float32")}, {})


def test_table_shard_zeros_commits_memory_as_rows_are_written():
    out = table_shard_zeros({}, {"shape": [5, 3], "dtype": "float32"})["Out"]
    assert out.shape == (5, 3) and out.dtype == np.float32 and not out.any()
    ids = table_shard_zeros({}, {"shape": [4], "dtype": "int64"})["Out"]
    assert ids.dtype == np.int64 and ids.shape == (4,)
