"""Kernels of the distributed-table ops (see ``oar_dist.ops.tables``).

``distributed_lookup_table`` asks for each distinct id once: the ids are made unique, cut by
shard (``shard_of``), and each pserver gets one ``PREFETCH`` request holding the ids of the
shards it serves; the requests to all pservers are posted before any reply is awaited. Ids may
be any int64 (the pservers map them to rows).
"""

from __future__ import annotations

import numpy as np
from oar.api import SelectedRows

from oar_dist.pserver import wire
from oar_dist.pserver.client import get_client
from oar_dist.pserver.hashed import shard_of

FLOATS = ("float32", "float64")
IDS = ("int32", "int64")


def _offsets(sections) -> np.ndarray:
    return np.concatenate([[0], np.cumsum(np.asarray(sections, dtype=np.int64))])


def _flat_ids(ids) -> np.ndarray:
    return np.asarray(ids).reshape(-1).astype(np.int64, copy=False)


def _pad(padding_idx: int, height: int) -> int:
    return padding_idx + height if padding_idx < -1 else padding_idx


def _lead(ids, attrs) -> tuple:
    shape = tuple(np.shape(ids))
    return shape if attrs["lookup_table_version"] == 2 else shape[:-1]


def prefetch_rows(uniq: np.ndarray, attrs: dict) -> np.ndarray:
    """The table rows of ``uniq`` (distinct ids), fetched from the pservers of their shards."""
    names, eps, tid = attrs["table_names"], attrs["endpoints"], attrs["trainer_id"]
    shard = shard_of(uniq, len(names))
    asks: dict = {}
    for i in np.unique(shard).tolist():
        pos = np.flatnonzero(shard == i)
        asks.setdefault(eps[i], []).append((names[i], uniq[pos], pos))
    for ep, items in asks.items():
        tensors = tuple((name, ids) for name, ids, _ in items)
        get_client(ep, tid).post(wire.Message(wire.PREFETCH, tensors=tensors))
    out = np.zeros((uniq.size, attrs["emb_dim"]), dtype=attrs["dtype"])
    for ep, items in asks.items():
        reply = get_client(ep, tid).drain()
        got = dict(reply.tensors) if reply is not None else {}
        for name, ids, pos in items:
            rows = got.get(name)
            if rows is None or rows.shape != (ids.size, out.shape[1]):
                raise ValueError(
                    f"distributed_lookup_table: pserver {ep} did not return the {ids.size} "
                    f"rows of '{name}' asked for"
                )
            out[pos] = rows
    return out


def distributed_lookup_table(inputs, attrs):
    ids = inputs["Ids"]
    flat = _flat_ids(ids)
    pad = _pad(attrs["padding_idx"], attrs["height"])
    uniq, inverse = np.unique(flat, return_inverse=True)
    if pad == -1:
        rows = prefetch_rows(uniq, attrs)
    else:  # the padding id reads zeros and gets no row on the pservers
        keep = uniq != pad
        rows = np.zeros((uniq.size, attrs["emb_dim"]), dtype=attrs["dtype"])
        rows[keep] = prefetch_rows(uniq[keep], attrs)
    out = rows[inverse.reshape(-1)]
    return {"Out": out.reshape(_lead(ids, attrs) + (attrs["emb_dim"],))}


def distributed_lookup_table_grad(inputs, attrs):
    flat = _flat_ids(inputs["Ids"])
    d = np.asarray(inputs["Out@GRAD"])
    dv = d.reshape(-1, d.shape[-1])
    pad = _pad(attrs["padding_idx"], attrs["height"])
    if pad != -1:
        keep = flat != pad
        flat, dv = flat[keep], dv[keep]
    return {"W@GRAD": SelectedRows(flat, wire.KEYED, np.ascontiguousarray(dv))}


def shard_selected_rows(inputs, attrs):
    x = inputs["X"]
    if not isinstance(x, SelectedRows):
        raise TypeError(f"shard_selected_rows: X must be SelectedRows, given {type(x).__name__}")
    rows, value = merge_ids(x.row_array, np.asarray(x.value))
    shard = shard_of(rows, attrs["shards"])
    out = []
    for k in range(attrs["shards"]):
        mask = shard == k
        out.append(SelectedRows(rows[mask], wire.KEYED, np.ascontiguousarray(value[mask])))
    return {"Out": out}


def merge_ids(rows: np.ndarray, value: np.ndarray) -> tuple:
    """Rows sorted, each id once with its values summed (as Fluid's communicator merges sparse
    gradients before sending): less to send, and the pserver finds sorted, distinct ids."""
    if rows.size < 2:
        return rows, value
    order = np.argsort(rows, kind="stable")
    r = rows[order]
    starts = np.concatenate(([0], np.flatnonzero(r[1:] != r[:-1]) + 1))
    if starts.size == r.size:  # no repeats: sorting is all
        return r, value[order]
    return r[starts], np.add.reduceat(value[order], starts, axis=0)


def table_shard_zeros(inputs, attrs):
    # np.zeros: the OS commits the pages as rows are written, so a shard's memory grows with
    # the ids it holds rather than its capacity
    return {"Out": np.zeros([int(d) for d in attrs["shape"]], dtype=attrs["dtype"])}


def scale_selected_rows(inputs, attrs):
    x, scale = inputs["X"], np.asarray(inputs["Scale"]).reshape(-1)
    if not isinstance(x, SelectedRows):
        raise TypeError(f"scale_selected_rows: X must be SelectedRows, given {type(x).__name__}")
    if scale.size != 1:
        raise ValueError(f"scale_selected_rows: Scale must hold one value, given {scale.size}")
    value = np.asarray(x.value)
    return {"Out": SelectedRows(x.row_array, x.height(), value * value.dtype.type(scale[0]))}


def split_selected_rows(inputs, attrs):
    x = inputs["X"]
    if not isinstance(x, SelectedRows):
        raise TypeError(f"split_selected_rows: X must be SelectedRows, given {type(x).__name__}")
    rows, value = x.row_array, np.asarray(x.value)
    offsets = _offsets(attrs["height_sections"])
    if offsets[-1] != x.height():
        raise ValueError(
            f"split_selected_rows: height_sections {attrs['height_sections']} add up to "
            f"{offsets[-1]}, X's height is {x.height()}"
        )
    out = []
    for i, s in enumerate(attrs["height_sections"]):
        lo = offsets[i]
        mask = (rows >= lo) & (rows < lo + s)
        out.append(SelectedRows(rows[mask] - lo, int(s), np.ascontiguousarray(value[mask])))
    return {"Out": out}


def kernels():
    """(op type, dtypes, kernel, selected_rows) for the plugin to register."""
    return [
        ("distributed_lookup_table", IDS, distributed_lookup_table, False),
        ("distributed_lookup_table_grad", FLOATS, distributed_lookup_table_grad, True),
        ("split_selected_rows", FLOATS, split_selected_rows, True),
        ("shard_selected_rows", FLOATS, shard_selected_rows, True),
        ("scale_selected_rows", FLOATS, scale_selected_rows, True),
        ("table_shard_zeros", FLOATS + IDS, table_shard_zeros, False),
    ]
