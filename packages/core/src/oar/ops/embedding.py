"""Table lookups: lookup_table (embedding, Ids [..., 1]), lookup_table_v2 (Ids of any shape), one_hot.

With ``is_sparse`` the gradient of W is a SelectedRows holding only the looked-up
rows; ``infer_var_type`` marks the gradient variable so the executor and the
optimizers treat it as sparse.
"""

from __future__ import annotations

from oar.framework.dtypes import convert_dtype
from oar.ops._infer import dtype_check, meta
from oar.registry import Attr, GradSpec, OpDef

_INT = ("int64", "int32")


def _table_attrs(v2: bool = False) -> dict:
    attrs = {
        "is_sparse": Attr(bool, False),
        "is_distributed": Attr(bool, False),
        "padding_idx": Attr(int, -1),
        "remote_prefetch": Attr(bool, False),
        "grad_inplace": Attr(bool, False),
        "epmap": Attr(list, []),
        "table_names": Attr(list, []),
        "trainer_id": Attr(int, 0),
        "height_sections": Attr(list, []),
    }
    if v2:
        del attrs["grad_inplace"]
    return attrs


def _check_table(ins, attrs) -> tuple:
    w, ids = ins["W"], ins["Ids"]
    if ids.dtype not in _INT:
        raise TypeError(f"Ids must be int64 (or int32) ids, given {ids.dtype}")
    if len(w.shape) != 2:
        raise ValueError(f"W must be a 2-D table [vocab, dim], given shape {list(w.shape)}")
    pad = attrs["padding_idx"]
    if w.shape[0] >= 0 and pad != -1 and not -w.shape[0] <= pad < w.shape[0]:
        raise ValueError(f"padding_idx {pad} is outside the table of {w.shape[0]} rows")
    return w, ids


def _infer_lookup(ins, attrs):
    w, ids = _check_table(ins, attrs)
    if not ids.shape or (ids.shape[-1] != 1 and ids.shape[-1] >= 0):
        raise ValueError(f"Ids' last dim must be 1 (shape [..., 1]), given shape {list(ids.shape)}")
    shape = tuple(ids.shape[:-1]) + (w.shape[1],)
    return {"Out": meta(shape, w.dtype, ids.lod_level)}


def _infer_lookup_v2(ins, attrs):
    w, ids = _check_table(ins, attrs)
    return {"Out": meta(tuple(ids.shape) + (w.shape[1],), w.dtype, ids.lod_level)}


def _sparse_grad_type(inputs, outputs, attrs):
    if attrs.get("is_sparse"):
        return {n: "selected_rows" for n in outputs.get("W@GRAD", ())}
    return {}


def _infer_one_hot(ins, attrs, v2=False):
    x = ins["X"]
    if x.dtype not in _INT:
        raise TypeError(f"X must hold int64 (or int32) class ids, given {x.dtype}")
    depth = attrs["depth"]
    if ins.get("depth_tensor") is None and depth < 1:
        raise ValueError(f"depth must be >= 1, given {depth}")
    if ins.get("depth_tensor") is not None:
        depth = -1
    if v2:
        shape = tuple(x.shape) + (depth,)
    else:
        if not x.shape or (x.shape[-1] != 1 and x.shape[-1] >= 0):
            raise ValueError(
                f"X's last dim must be 1 (shape [..., 1]), given shape {list(x.shape)}"
            )
        shape = tuple(x.shape[:-1]) + (depth,)
    return {"Out": meta(shape, convert_dtype(attrs["dtype"]), x.lod_level)}


def register(registry) -> None:
    for name, infer, v2 in (
        ("lookup_table", _infer_lookup, False),
        ("lookup_table_v2", _infer_lookup_v2, True),
    ):
        # the grad op is registered first so it carries infer_var_type (sparse W@GRAD)
        registry.register_op(
            OpDef(
                name + "_grad",
                ["W?", "Ids?", "Out@GRAD?"],
                ["W@GRAD?"],
                _table_attrs(v2),
                kernel_dtype="W",
                infer_var_type=_sparse_grad_type,
                doc=f"gradient of {name}",
            )
        )
        registry.register_op(
            OpDef(
                name,
                ["W", "Ids"],
                ["Out"],
                _table_attrs(v2),
                infer_shape=infer,
                kernel_dtype="W",
                grad=GradSpec(("W", "Ids", "Out@GRAD"), ("W@GRAD",)),
                share_lod=(("Ids", "Out"),),
            )
        )
    for name, v2 in (("one_hot", False), ("one_hot_v2", True)):
        registry.register_op(
            OpDef(
                name,
                ["X", "depth_tensor?"],
                ["Out"],
                {
                    "depth": Attr(int, -1),
                    "dtype": Attr(str, "float32", dtype_check),
                    "allow_out_of_range": Attr(bool, False),
                },
                infer_shape=lambda ins, a, v2=v2: _infer_one_hot(ins, a, v2),
                kernel_dtype="X",
                share_lod=(("X", "Out"),),
            )
        )
