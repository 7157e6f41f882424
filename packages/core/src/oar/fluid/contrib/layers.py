"""``fluid.contrib`` layers built from core layers: fused elementwise+activation, embedding +
sequence pool, partial concat / sum. Each works in static graphs and dygraph."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from oar.errors import ArgumentError

__all__ = [
    "fused_elemwise_activation",
    "fused_embedding_seq_pool",
    "partial_concat",
    "partial_sum",
    "shuffle_batch",
    "ctr_metric_bundle",
]

_BINARY = {"elementwise_add", "elementwise_mul"}
_UNARY = {"scale", "relu", "tanh", "sigmoid", "gelu"}


def _unary(name: str, v: Any, scale: float) -> Any:
    from oar import layers

    if name == "scale":
        return layers.scale(v, scale=scale)
    return getattr(layers, name)(v)


def _binary(name: str, x: Any, y: Any, axis: int) -> Any:
    from oar import layers

    return getattr(layers, name)(x, y, axis=axis)


def fused_elemwise_activation(
    x: Any,
    y: Any,
    functor_list: Sequence,
    axis: int = -1,
    scale: float = 0.0,
    save_intermediate_out: bool = True,
) -> Any:
    """``f1(x, f2(y))`` when ``f1`` is binary, ``f1(f2(x, y))`` when ``f1`` is unary.

    ``functor_list`` is ``[f1, f2]``: one of elementwise_add / elementwise_mul and one of
    scale (by ``scale``), relu, tanh, sigmoid, gelu, as Fluid 1.8.5's fused op computes.
    """
    if (
        not isinstance(functor_list, (list, tuple))
        or len(functor_list) != 2
        or not (
            (functor_list[0] in _BINARY and functor_list[1] in _UNARY)
            or (functor_list[0] in _UNARY and functor_list[1] in _BINARY)
        )
    ):
        raise ArgumentError(
            "fused_elemwise_activation",
            f"functor_list must be [binary, unary] or [unary, binary] with binary in "
            f"{sorted(_BINARY)} and unary in {sorted(_UNARY)}, given {functor_list!r}",
        )
    f1, f2 = functor_list
    if f1 in _BINARY:
        return _binary(f1, x, _unary(f2, y, scale), axis)
    return _unary(f1, _binary(f2, x, y, axis), scale)


def fused_embedding_seq_pool(
    input: Any,
    size: Sequence,
    is_sparse: bool = False,
    padding_idx: int | None = None,
    combiner: str = "sum",
    param_attr: Any = None,
    dtype: str = "float32",
) -> Any:
    """Embed the ids of a LoD sequence and sum each sequence's vectors (``combiner='sum'``)."""
    from oar import layers

    if combiner != "sum":
        raise ArgumentError(
            "fused_embedding_seq_pool", f"combiner must be 'sum' (as Fluid), given {combiner!r}"
        )
    emb = layers.embedding(
        input,
        size=size,
        is_sparse=is_sparse,
        padding_idx=padding_idx,
        param_attr=param_attr,
        dtype=dtype,
    )
    return layers.sequence_pool(emb, "sum")


def _columns(layer: str, input: Any, start_index: int, length: int) -> list:
    from oar import layers

    if not isinstance(input, (list, tuple)) or not input:
        raise ArgumentError(layer, "input must be a non-empty list of 2-D variables")
    width = input[0].shape[1]
    start = start_index if start_index >= 0 else start_index + width
    end = width if length < 0 else start + length
    if not 0 <= start < width or end > width:
        raise ArgumentError(
            layer,
            f"start_index {start_index} and length {length} do not fit the {width} columns "
            f"of {input[0].name}",
        )
    for v in input:
        if len(v.shape) != 2 or v.shape[1] != width:
            raise ArgumentError(
                layer, f"every input must be 2-D with {width} columns, {v.name} is {list(v.shape)}"
            )
    return [layers.slice(v, axes=[1], starts=[start], ends=[end]) for v in input]


def partial_concat(input: Sequence, start_index: int = 0, length: int = -1) -> Any:
    """Columns ``[start_index, start_index + length)`` of each 2-D input, concatenated."""
    from oar import layers

    return layers.concat(_columns("partial_concat", input, start_index, length), axis=1)


def partial_sum(input: Sequence, start_index: int = 0, length: int = -1) -> Any:
    """Columns ``[start_index, start_index + length)`` of each 2-D input, summed."""
    from oar import layers

    return layers.sums(_columns("partial_sum", input, start_index, length))


def shuffle_batch(x: Any, seed: int | None = None) -> Any:
    """The rows of ``x`` (all axes but the last flattened) in a new random order each run.

    A persistable seed variable carries the generator's state from run to run
    (``seed`` starts it; None: a random start).
    """
    from oar import layers
    from oar.framework import unique_name
    from oar.layer_helper import LayerHelper

    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise ArgumentError("shuffle_batch", f"seed must be an int or None, given {seed!r}")
    helper = LayerHelper("shuffle_batch")
    out = helper.create_variable_for_type_inference(x.dtype)
    index = helper.create_variable_for_type_inference("int64")
    index.stop_gradient = True
    seed_var = layers.create_global_var(
        [1],
        int(seed or 0),
        "int64",
        persistable=True,
        name=unique_name.generate("shuffle_batch_seed"),
    )
    seed_var.stop_gradient = True
    helper.append_op(
        "shuffle_batch",
        {"X": [x], "Seed": [seed_var]},
        {"Out": [out], "ShuffleIdx": [index], "SeedOut": [seed_var]},
        {"startup_seed": int(seed or 0)},
    )
    return out


def ctr_metric_bundle(input: Any, label: Any) -> tuple:
    """Running CTR statistics, as Fluid 1.8.5: persistable ``[1]`` float32 sums of the squared
    error, the absolute error, the predictions, their sigmoids (q), the positive labels and
    the instances, each increased by every run."""
    from oar import layers
    from oar.framework import unique_name

    def acc(key: str) -> Any:
        v = layers.create_global_var(
            [1], 0.0, "float32", persistable=True, name=unique_name.generate(f"ctr_{key}")
        )
        v.stop_gradient = True
        return v

    diff = layers.elementwise_sub(input, label)
    batch = {
        "sqrerr": layers.reduce_sum(layers.square(diff)),
        "abserr": layers.reduce_sum(layers.abs(diff)),
        "prob": layers.reduce_sum(input),
        "q": layers.reduce_sum(layers.sigmoid(input)),
        "pos_num": layers.reduce_sum(label),
        "ins_num": layers.reduce_sum(layers.ones_like(label)),
    }
    out = []
    for key, value in batch.items():
        total = acc(key)
        layers.assign(layers.elementwise_add(total, layers.reshape(value, [1])), output=total)
        out.append(total)
    return tuple(out)
