"""Lookup layers: embedding (op lookup_table) and one_hot; ``fluid.embedding``/``fluid.one_hot``
(the ``_v2`` ops, Ids of any shape) are :func:`embedding_v2` and :func:`one_hot_v2`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from oar.errors import ArgumentError, ArgumentTypeError
from oar.framework.dtypes import convert_dtype
from oar.layer_helper import LayerHelper, check_variable, is_variable

__all__ = ["embedding", "one_hot"]


def _check_size(layer: str, size: Any) -> list:
    if not isinstance(size, (list, tuple)) or len(size) != 2:
        raise ArgumentError(layer, f"size must be [vocab_size, emb_dim], given {size!r}")
    if not all(isinstance(d, int) and not isinstance(d, bool) and d > 0 for d in size):
        raise ArgumentError(layer, f"size entries must be positive ints, given {list(size)}")
    return [int(size[0]), int(size[1])]


def _embedding(
    op: str,
    layer: str,
    input: Any,
    size: Sequence,
    is_sparse: bool,
    is_distributed: bool,
    padding_idx: int | None,
    param_attr: Any,
    dtype: Any,
) -> Any:
    helper = LayerHelper(layer, param_attr=param_attr)
    check_variable(layer, "input", input)
    size = _check_size(layer, size)
    if input.dtype not in ("int64", "int32"):
        raise ArgumentTypeError(
            layer, f"input '{input.name}' must hold int64 ids, given dtype {input.dtype}"
        )
    if padding_idx is None:
        padding_idx = -1
    else:
        if not isinstance(padding_idx, int) or not -size[0] <= padding_idx < size[0]:
            raise ArgumentError(
                layer,
                f"padding_idx must be an int in [-{size[0]}, {size[0]}), given {padding_idx!r}",
            )
        if padding_idx < 0:
            padding_idx += size[0]
    dtype = convert_dtype(dtype)
    w = helper.create_parameter(helper.kwargs.get("param_attr"), size, dtype)
    out = helper.create_variable_for_type_inference(dtype)
    helper.append_op(
        op,
        {"Ids": [input], "W": [w]},
        {"Out": [out]},
        {
            "is_sparse": bool(is_sparse),
            "is_distributed": bool(is_distributed),
            "remote_prefetch": bool(is_sparse and not is_distributed),
            "padding_idx": int(padding_idx),
        },
    )
    return out


def embedding(
    input: Any,
    size: Sequence,
    is_sparse: bool = False,
    is_distributed: bool = False,
    padding_idx: int | None = None,
    param_attr: Any = None,
    dtype: Any = "float32",
) -> Any:
    """Rows of a ``size`` = [vocab, dim] table picked by int64 ids of shape [..., 1].

    ``padding_idx`` rows read as zeros and get no gradient; ``is_sparse=True``
    makes the table's gradient a SelectedRows of the looked-up rows. A numpy
    initial table goes in ``param_attr=ParamAttr(initializer=NumpyArrayInitializer(arr))``.
    """
    return _embedding(
        "lookup_table",
        "embedding",
        input,
        size,
        is_sparse,
        is_distributed,
        padding_idx,
        param_attr,
        dtype,
    )


def embedding_v2(
    input: Any,
    size: Sequence,
    is_sparse: bool = False,
    is_distributed: bool = False,
    padding_idx: int | None = None,
    param_attr: Any = None,
    dtype: Any = "float32",
) -> Any:
    """``fluid.embedding``: like :func:`embedding` but the ids may have any shape (no trailing 1)."""
    return _embedding(
        "lookup_table_v2",
        "embedding",
        input,
        size,
        is_sparse,
        is_distributed,
        padding_idx,
        param_attr,
        dtype,
    )


def _one_hot(op: str, input: Any, depth: Any, allow_out_of_range: bool) -> Any:
    helper = LayerHelper("one_hot")
    check_variable("one_hot", "input", input)
    inputs = {"X": [input]}
    attrs: dict = {"allow_out_of_range": bool(allow_out_of_range), "dtype": "float32"}
    if is_variable(depth):
        inputs["depth_tensor"] = [depth]
    else:
        if not isinstance(depth, int) or isinstance(depth, bool) or depth < 1:
            raise ArgumentError(
                "one_hot", f"depth must be a positive int or a Variable, given {depth!r}"
            )
        attrs["depth"] = depth
    out = helper.create_variable_for_type_inference("float32")
    helper.append_op(op, inputs, {"Out": [out]}, attrs)
    out.stop_gradient = True
    return out


def one_hot(input: Any, depth: Any, allow_out_of_range: bool = False) -> Any:
    """float32 one-hot rows of ``depth`` for int64 ids of shape [..., 1]."""
    return _one_hot("one_hot", input, depth, allow_out_of_range)


def one_hot_v2(input: Any, depth: Any, allow_out_of_range: bool = False) -> Any:
    """``fluid.one_hot``: ids of any shape, a new trailing dim of ``depth``."""
    return _one_hot("one_hot_v2", input, depth, allow_out_of_range)


# fluid.embedding / fluid.one_hot are these two: their errors name the user's line like the layers'
def _wrap_v2() -> None:
    from oar.layers._user_line import with_user_line

    g = globals()
    g["embedding_v2"] = with_user_line(embedding_v2, "embedding")
    g["one_hot_v2"] = with_user_line(one_hot_v2, "one_hot")


_wrap_v2()
