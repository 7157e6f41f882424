"""Range and shape layers: shape, range, linspace, increment; random tensors uniform_random,
gaussian_random."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from oar.errors import ArgumentError, ArgumentTypeError
from oar.framework.dtypes import convert_dtype
from oar.layer_helper import LayerHelper, check_variable, is_variable

__all__ = [
    "shape",
    "range",
    "linspace",
    "increment",
    "uniform_random",
    "gaussian_random",
    "uniform_random_batch_size_like",
    "gaussian_random_batch_size_like",
    "sampling_id",
]


def shape(input: Any) -> Any:
    """The shape of ``input`` at run time, as an int32 tensor."""
    helper = LayerHelper("shape")
    check_variable("shape", "input", input)
    out = helper.create_variable_for_type_inference("int32", stop_gradient=True)
    helper.append_op("shape", {"Input": [input]}, {"Out": [out]})
    out.stop_gradient = True
    return out


def _scalar(layer: str, arg: str, v: Any, dtype: str) -> Any:
    from oar.layers.tensor import fill_constant

    if is_variable(v):
        if v.dtype != dtype:
            from oar.layers.tensor import cast

            return cast(v, dtype)
        return v
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ArgumentTypeError(layer, f"{arg} must be a number or a Variable, given {v!r}")
    return fill_constant([1], dtype, v)


def range(start: Any, end: Any, step: Any, dtype: Any) -> Any:  # Fluid's name
    """``[start, start + step, ...)`` up to ``end`` (exclusive), 1-D."""
    helper = LayerHelper("range")
    dtype = convert_dtype(dtype)
    if not any(is_variable(v) for v in (start, end, step)):
        if step == 0:
            raise ArgumentError("range", "step must not be 0")
    out = helper.create_variable_for_type_inference(dtype)
    helper.append_op(
        "range",
        {
            "Start": [_scalar("range", "start", start, dtype)],
            "End": [_scalar("range", "end", end, dtype)],
            "Step": [_scalar("range", "step", step, dtype)],
        },
        {"Out": [out]},
    )
    out.stop_gradient = True
    return out


def linspace(start: Any, stop: Any, num: Any, dtype: Any) -> Any:
    """``num`` evenly spaced values from ``start`` to ``stop`` inclusive."""
    helper = LayerHelper("linspace")
    dtype = convert_dtype(dtype)
    if not is_variable(num) and (not isinstance(num, int) or isinstance(num, bool) or num < 1):
        raise ArgumentError("linspace", f"num must be a positive int or a Variable, given {num!r}")
    out = helper.create_variable_for_type_inference(dtype)
    helper.append_op(
        "linspace",
        {
            "Start": [_scalar("linspace", "start", start, dtype)],
            "Stop": [_scalar("linspace", "stop", stop, dtype)],
            "Num": [_scalar("linspace", "num", num, "int32")],
        },
        {"Out": [out]},
    )
    out.stop_gradient = True
    return out


def increment(x: Any, value: float = 1.0, in_place: bool = True) -> Any:
    """``x + value`` for a one-element ``x``; with ``in_place`` the result is written back to ``x``."""
    helper = LayerHelper("increment")
    check_variable("increment", "x", x)
    out = x if in_place else helper.create_variable_for_type_inference(x.dtype)
    helper.append_op("increment", {"X": [x]}, {"Out": [out]}, {"step": float(value)})
    return out


def _shape_tensor(dims: Sequence) -> Any:
    """One int64 tensor from a list mixing ints and [1] Variables."""
    from oar.layers.manip import concat
    from oar.layers.tensor import cast, fill_constant

    parts = [
        (cast(d, "int64") if d.dtype != "int64" else d)
        if is_variable(d)
        else fill_constant([1], "int64", d)
        for d in dims
    ]
    return concat(parts, axis=0)


def _random(op: str, shape_: Any, dtype: Any, attrs: dict) -> Any:
    helper = LayerHelper(op)
    dtype = convert_dtype(dtype)
    if dtype not in ("float16", "float32", "float64"):
        raise ArgumentTypeError(op, f"dtype must be a float type, given {dtype}")
    inputs: dict = {}
    if is_variable(shape_):
        inputs["ShapeTensor"] = [shape_]
        attrs["shape"] = []
    elif isinstance(shape_, (list, tuple)) and any(is_variable(d) for d in shape_):
        inputs["ShapeTensor"] = [_shape_tensor(shape_)]
        attrs["shape"] = []
    else:
        if isinstance(shape_, int):
            shape_ = [shape_]
        if (
            not isinstance(shape_, (list, tuple))
            or not shape_
            or not all(isinstance(d, int) and not isinstance(d, bool) and d > 0 for d in shape_)
        ):
            raise ArgumentError(
                op,
                f"shape must be a non-empty list of positive ints (or a Variable), given {shape_!r}",
            )
        attrs["shape"] = [int(d) for d in shape_]
    if not isinstance(attrs["seed"], int):
        raise ArgumentTypeError(op, f"seed must be an int, given {attrs['seed']!r}")
    out = helper.create_variable_for_type_inference(dtype)
    helper.append_op(op, inputs, {"Out": [out]}, {"dtype": dtype, **attrs})
    return out


def uniform_random(
    shape: Sequence,
    dtype: Any = "float32",
    min: float = -1.0,
    max: float = 1.0,
    seed: int = 0,
) -> Any:
    """A tensor of values drawn uniformly from [min, max) (seed 0: a fresh draw each run)."""
    if not min < max:
        raise ArgumentError("uniform_random", f"min ({min}) must be less than max ({max})")
    return _random(
        "uniform_random", shape, dtype, {"min": float(min), "max": float(max), "seed": seed}
    )


def gaussian_random(
    shape: Sequence, mean: float = 0.0, std: float = 1.0, seed: int = 0, dtype: Any = "float32"
) -> Any:
    """A tensor of normal samples N(mean, std^2)."""
    if std < 0:
        raise ArgumentError("gaussian_random", f"std must be >= 0, given {std}")
    return _random(
        "gaussian_random", shape, dtype, {"mean": float(mean), "std": float(std), "seed": seed}
    )


def _random_like(
    op: str,
    input: Any,
    shape: Sequence,
    dtype: Any,
    input_dim_idx: int,
    output_dim_idx: int,
    attrs: dict,
) -> Any:
    helper = LayerHelper(op)
    check_variable(op, "input", input)
    dtype = convert_dtype(dtype)
    if dtype not in ("float16", "float32", "float64"):
        raise ArgumentTypeError(op, f"dtype must be a float type, given {dtype}")
    if (
        not isinstance(shape, (list, tuple))
        or not shape
        or not all(isinstance(d, int) for d in shape)
    ):
        raise ArgumentError(op, f"shape must be a non-empty list of ints, given {shape!r}")
    out = helper.create_variable_for_type_inference(dtype)
    helper.append_op(
        op,
        {"Input": [input]},
        {"Out": [out]},
        {
            "shape": [int(d) for d in shape],
            "dtype": dtype,
            "input_dim_idx": input_dim_idx,
            "output_dim_idx": output_dim_idx,
            **attrs,
        },
    )
    out.stop_gradient = True
    return out


def uniform_random_batch_size_like(
    input: Any,
    shape: Sequence,
    dtype: Any = "float32",
    input_dim_idx: int = 0,
    output_dim_idx: int = 0,
    min: float = -1.0,
    max: float = 1.0,
    seed: int = 0,
) -> Any:
    """Uniform noise whose dim ``output_dim_idx`` is ``input``'s dim ``input_dim_idx`` (the batch size)."""
    if not min < max:
        raise ArgumentError(
            "uniform_random_batch_size_like", f"min ({min}) must be less than max ({max})"
        )
    return _random_like(
        "uniform_random_batch_size_like",
        input,
        shape,
        dtype,
        input_dim_idx,
        output_dim_idx,
        {"min": float(min), "max": float(max), "seed": seed},
    )


def gaussian_random_batch_size_like(
    input: Any,
    shape: Sequence,
    input_dim_idx: int = 0,
    output_dim_idx: int = 0,
    mean: float = 0.0,
    std: float = 1.0,
    seed: int = 0,
    dtype: Any = "float32",
) -> Any:
    """Normal noise whose dim ``output_dim_idx`` is ``input``'s dim ``input_dim_idx`` (the batch size)."""
    if std < 0:
        raise ArgumentError("gaussian_random_batch_size_like", f"std must be >= 0, given {std}")
    return _random_like(
        "gaussian_random_batch_size_like",
        input,
        shape,
        dtype,
        input_dim_idx,
        output_dim_idx,
        {"mean": float(mean), "std": float(std), "seed": seed},
    )


def sampling_id(
    x: Any, min: float = 0.0, max: float = 1.0, seed: int = 0, dtype: Any = "float32"
) -> Any:
    """One int64 class id per row of the probabilities ``x``, drawn at random."""
    helper = LayerHelper("sampling_id")
    check_variable("sampling_id", "x", x)
    out = helper.create_variable_for_type_inference("int64", stop_gradient=True)
    helper.append_op(
        "sampling_id",
        {"X": [x]},
        {"Out": [out]},
        {"min": float(min), "max": float(max), "seed": seed},
    )
    return out
