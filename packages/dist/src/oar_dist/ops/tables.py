"""Distributed lookup tables: op definitions (the trainer's half of ``is_distributed=True``).

A distributed table lives only on the pservers, as hashed shards: any int64 id belongs to shard
``shard_of(id, len(table_names))`` (``oar_dist.pserver.hashed``), held by pserver
``endpoints[k]`` under the name ``table_names[k]``; ``height`` is the table's ``dict_size``.

- ``distributed_lookup_table`` replaces ``lookup_table(_v2)``: it asks each pserver once for the
  distinct ids of its shard that ``Ids`` holds (``prefetch``) and gathers the rows into ``Out``.
- ``distributed_lookup_table_grad`` replaces ``lookup_table_grad``: the gradient of the table,
  from ``Ids`` and ``Out@GRAD`` alone, as SelectedRows whose rows are the ids (height -1).
- ``shard_selected_rows`` cuts that gradient into the shards for ``send``.
- ``split_selected_rows`` (Fluid's op) cuts a SelectedRows into row blocks (``height_sections``).
- ``table_shard_zeros`` creates the zero storage of a table shard (rows, per-row optimizer state,
  the id map) so that memory pages are committed only as rows are used.
- ``scale_selected_rows`` multiplies the values of a SelectedRows by a one-element tensor
  (clipping a table's gradient by the global norm on the trainer, without densifying it).
"""

from __future__ import annotations

from oar.api import Attr, OpDef, VarMeta

_TABLE = {
    "table_names": Attr(list, []),
    "endpoints": Attr(list, []),
    "height": Attr(int, 0),
    "padding_idx": Attr(int, -1),
    "trainer_id": Attr(int, 0),
    "lookup_table_version": Attr(int, 1),
    "emb_dim": Attr(int, 0),
    "dtype": Attr(str, "float32"),
}


def _check_sections(attrs) -> None:
    n = len(attrs["table_names"])
    if n == 0 or len(attrs["endpoints"]) != n:
        raise ValueError(
            f"distributed_lookup_table: table_names {attrs['table_names']} and endpoints "
            f"{attrs['endpoints']} must list one entry per shard"
        )


def _lookup_shape(ins, attrs):
    _check_sections(attrs)
    ids = ins["Ids"]
    lead = tuple(ids.shape) if attrs["lookup_table_version"] == 2 else tuple(ids.shape[:-1])
    return {"Out": VarMeta(lead + (attrs["emb_dim"],), attrs["dtype"], ids.lod_level)}


def _split_shape(ins, attrs):
    x = ins["X"]
    return {"Out": [VarMeta((s,) + tuple(x.shape[1:]), x.dtype) for s in attrs["height_sections"]]}


def _shard_shape(ins, attrs):
    x = ins["X"]
    return {"Out": [VarMeta((-1,) + tuple(x.shape[1:]), x.dtype) for _ in range(attrs["shards"])]}


def _grad_type(inputs, outputs, attrs):
    return {n: "selected_rows" for n in outputs.get("W@GRAD", ())}


def _split_type(inputs, outputs, attrs):
    return {n: "selected_rows" for n in outputs.get("Out", ())}


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "distributed_lookup_table",
            ["Ids"],
            ["Out"],
            dict(_TABLE),
            infer_shape=_lookup_shape,
            share_lod=(("Ids", "Out"),),
            doc="Out = rows Ids of a table held by the pservers (one prefetch per pserver)",
        )
    )
    registry.register_op(
        OpDef(
            "distributed_lookup_table_grad",
            ["Ids", "Out@GRAD"],
            ["W@GRAD"],
            {
                "height": Attr(int, 0),
                "padding_idx": Attr(int, -1),
                "lookup_table_version": Attr(int, 1),
            },
            kernel_dtype="Out@GRAD",
            infer_var_type=_grad_type,
            doc="W@GRAD = SelectedRows(rows Ids, Out@GRAD), rows keyed by id (height -1)",
        )
    )
    registry.register_op(
        OpDef(
            "shard_selected_rows",
            ["X"],
            ["Out*"],
            {"shards": Attr(int, 1)},
            infer_shape=_shard_shape,
            infer_var_type=_split_type,
            doc="Out[k] = the rows of SelectedRows X (ids of a hashed table) held by shard k",
        )
    )
    registry.register_op(
        OpDef(
            "table_shard_zeros",
            [],
            ["Out"],
            {"shape": Attr(list, []), "dtype": Attr(str, "float32")},
            infer_shape=lambda ins, attrs: {"Out": VarMeta(tuple(attrs["shape"]), attrs["dtype"])},
            doc="Out = zeros of shape and dtype, its memory committed as it is written",
        )
    )
    registry.register_op(
        OpDef(
            "scale_selected_rows",
            ["X", "Scale"],
            ["Out"],
            {},
            infer_shape=lambda ins, attrs: {"Out": ins["X"]},
            infer_var_type=_split_type,
            doc="Out = SelectedRows X with its values times the one-element tensor Scale",
        )
    )
    registry.register_op(
        OpDef(
            "split_selected_rows",
            ["X"],
            ["Out*"],
            {"height_sections": Attr(list, [])},
            infer_shape=_split_shape,
            infer_var_type=_split_type,
            doc="Out[i] = the rows of SelectedRows X in row block i (row ids local to the block)",
        )
    )
