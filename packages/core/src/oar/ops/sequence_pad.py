"""Between LoD sequences and padded batches: sequence_pad, sequence_unpad, sequence_mask."""

from __future__ import annotations

from oar.framework.dtypes import convert_dtype
from oar.ops._infer import meta
from oar.registry import Attr, GradSpec, OpDef

_INTS = ("int32", "int64")


def _infer_pad(ins, attrs):
    x, pad = ins["X"], ins["PadValue"]
    if pad.dtype != x.dtype:
        raise TypeError(f"PadValue must have X's dtype {x.dtype}, given {pad.dtype}")
    if len(x.shape) < 1:
        raise ValueError(f"X must have at least one dim, given shape {list(x.shape)}")
    step = tuple(x.shape[1:])
    return {
        "Out": meta((-1, attrs["padded_length"]) + step, x.dtype),
        "Length": meta((-1,), "int64"),
    }


def _infer_unpad(ins, attrs):
    x, length = ins["X"], ins["Length"]
    if length.dtype not in _INTS:
        raise TypeError(f"Length must be int64 (or int32), given {length.dtype}")
    if len(x.shape) < 2:
        raise ValueError(f"X must be [batch, max_len, ...], given shape {list(x.shape)}")
    return {"Out": meta((-1,) + tuple(x.shape[2:]), x.dtype, 1)}


def _infer_mask(ins, attrs):
    x = ins["X"]
    if x.dtype not in _INTS:
        raise TypeError(f"X (the lengths) must be int64 or int32, given {x.dtype}")
    maxlen = attrs["maxlen"]
    return {
        "Y": meta(
            tuple(x.shape) + (maxlen if maxlen >= 0 else -1,), convert_dtype(attrs["out_dtype"])
        )
    }


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "sequence_pad",
            ["X", "PadValue"],
            ["Out", "Length"],
            {"padded_length": Attr(int, -1)},
            infer_shape=_infer_pad,
            kernel_dtype="X",
            grad=GradSpec(("Out@GRAD", "X"), ("X@GRAD",)),
            doc="pad every sequence to one length: [num_seqs, padded_length, ...]",
        )
    )
    registry.register_op(
        OpDef(
            "sequence_unpad",
            ["X", "Length"],
            ["Out"],
            infer_shape=_infer_unpad,
            kernel_dtype="X",
            grad=GradSpec(("Out@GRAD", "X", "Length"), ("X@GRAD",)),
            doc="the first Length[i] steps of every row of a padded batch, as a LoDTensor",
        )
    )
    registry.register_op(
        OpDef(
            "sequence_mask",
            ["X", "MaxLenTensor?"],
            ["Y"],
            {"maxlen": Attr(int, -1), "out_dtype": Attr((int, str), "int64")},
            infer_shape=_infer_mask,
            kernel_dtype="X",
            doc="mask[..., j] = j < X[...]",
        )
    )
