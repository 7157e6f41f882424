"""Kernels of the distributed-table ops (see ``oar_dist.ops.tables``).

``distributed_lookup_table`` asks for each distinct id once: the ids are made
unique, cut by row block, and each pserver gets one ``PREFETCH`` request
holding the block-local row ids of every block it serves; the requests to all
pservers are posted before any reply is awaited.
"""

from __future__ import annotations

import numpy as np
from oar.api import SelectedRows

from oar_dist.pserver import wire
from oar_dist.pserver.client import get_client

FLOATS = ("float32", "float64")
IDS = ("int32", "int64")


def _offsets(sections) -> np.ndarray:
    return np.concatenate([[0], np.cumsum(np.asarray(sections, dtype=np.int64))])


def _flat_ids(ids, height: int, op: str) -> np.ndarray:
    flat = np.asarray(ids).reshape(-1).astype(np.int64, copy=False)
    if flat.size and (flat.min() < 0 or flat.max() >= height):
        bad = flat[(flat < 0) | (flat >= height)]
        raise ValueError(
            f"{op}: Ids hold {bad[:5].tolist()} outside the table's rows [0, {height})"
        )
    return flat


def _pad(padding_idx: int, height: int) -> int:
    return padding_idx + height if padding_idx < -1 else padding_idx


def _lead(ids, attrs) -> tuple:
    shape = tuple(np.shape(ids))
    return shape if attrs["lookup_table_version"] == 2 else shape[:-1]


def prefetch_rows(uniq: np.ndarray, attrs: dict) -> np.ndarray:
    """The table rows ``uniq`` (sorted, distinct global ids), fetched from their pservers."""
    offsets = _offsets(attrs["height_sections"])
    names, eps, tid = attrs["table_names"], attrs["endpoints"], attrs["trainer_id"]
    block = np.searchsorted(offsets[1:], uniq, side="right")
    asks: dict = {}
    for i in np.unique(block).tolist():
        pos = np.flatnonzero(block == i)
        asks.setdefault(eps[i], []).append((names[i], uniq[pos] - offsets[i], pos))
    for ep, items in asks.items():
        tensors = tuple((name, local) for name, local, _ in items)
        get_client(ep, tid).post(wire.Message(wire.PREFETCH, tensors=tensors))
    out = np.zeros((uniq.size, attrs["emb_dim"]), dtype=attrs["dtype"])
    for ep, items in asks.items():
        reply = get_client(ep, tid).drain()
        got = dict(reply.tensors) if reply is not None else {}
        for name, local, pos in items:
            rows = got.get(name)
            if rows is None or rows.shape != (local.size, out.shape[1]):
                raise ValueError(
                    f"distributed_lookup_table: pserver {ep} did not return the {local.size} "
                    f"rows of '{name}' asked for"
                )
            out[pos] = rows
    return out


def distributed_lookup_table(inputs, attrs):
    ids = inputs["Ids"]
    height = int(sum(attrs["height_sections"]))
    flat = _flat_ids(ids, height, "distributed_lookup_table")
    pad = _pad(attrs["padding_idx"], height)
    uniq, inverse = np.unique(flat, return_inverse=True)
    out = prefetch_rows(uniq, attrs)[inverse.reshape(-1)]
    if pad != -1:
        out[flat == pad] = 0
    return {"Out": out.reshape(_lead(ids, attrs) + (attrs["emb_dim"],))}


def distributed_lookup_table_grad(inputs, attrs):
    height = attrs["height"]
    flat = _flat_ids(inputs["Ids"], height, "distributed_lookup_table_grad")
    d = np.asarray(inputs["Out@GRAD"])
    dv = d.reshape(-1, d.shape[-1])
    pad = _pad(attrs["padding_idx"], height)
    if pad != -1:
        keep = flat != pad
        flat, dv = flat[keep], dv[keep]
    return {"W@GRAD": SelectedRows(flat, height, np.ascontiguousarray(dv))}


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
    ]
