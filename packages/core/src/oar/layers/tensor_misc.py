"""Smaller tensor layers: cos_sim, label_smooth, reverse, roll, multiplex, eye, diag, unique, size,
isfinite, has_inf, has_nan, sum."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from oar.errors import ArgumentError, ArgumentTypeError
from oar.framework.dtypes import convert_dtype
from oar.layer_helper import LayerHelper, check_variable

__all__ = [
    "cos_sim",
    "label_smooth",
    "reverse",
    "roll",
    "multiplex",
    "eye",
    "diag",
    "unique",
    "size",
    "isfinite",
    "has_inf",
    "has_nan",
    "sum",
    "unique_with_counts",
    "shard_index",
    "merge_selected_rows",
    "get_tensor_from_selected_rows",
]


def _ints(layer: str, arg: str, v: Any) -> list:
    if isinstance(v, int) and not isinstance(v, bool):
        v = [v]
    if not isinstance(v, (list, tuple)) or not all(
        isinstance(a, int) and not isinstance(a, bool) for a in v
    ):
        raise ArgumentTypeError(layer, f"{arg} must be an int or a list of ints, given {v!r}")
    return [int(a) for a in v]


def cos_sim(X: Any, Y: Any) -> Any:
    """Cosine similarity of each row of X with the same row of Y (or Y's single row): [N, 1]."""
    helper = LayerHelper("cos_sim")
    check_variable("cos_sim", "X", X)
    check_variable("cos_sim", "Y", Y)
    out = helper.create_variable_for_type_inference(X.dtype)
    xnorm = helper.create_variable_for_type_inference(X.dtype)
    ynorm = helper.create_variable_for_type_inference(X.dtype)
    helper.append_op(
        "cos_sim", {"X": [X], "Y": [Y]}, {"Out": [out], "XNorm": [xnorm], "YNorm": [ynorm]}
    )
    return out


def label_smooth(
    label: Any,
    prior_dist: Any = None,
    epsilon: float = 0.1,
    dtype: Any = "float32",
    name: str | None = None,
) -> Any:
    """(1 - epsilon) * label + epsilon * prior (uniform 1/C when no prior_dist)."""
    helper = LayerHelper("label_smooth", name=name)
    check_variable("label_smooth", "label", label)
    if (
        isinstance(epsilon, bool)
        or not isinstance(epsilon, (int, float))
        or not 0.0 <= epsilon <= 1.0
    ):
        raise ArgumentError(
            "label_smooth", f"epsilon must be a number in [0, 1], given {epsilon!r}"
        )
    inputs = {"X": [label]}
    if prior_dist is not None:
        check_variable("label_smooth", "prior_dist", prior_dist)
        inputs["PriorDist"] = [prior_dist]
    out = helper.create_variable_for_type_inference(convert_dtype(dtype))
    helper.append_op("label_smooth", inputs, {"Out": [out]}, {"epsilon": float(epsilon)})
    return out


def reverse(x: Any, axis: Any) -> Any:
    """``x`` flipped along ``axis`` (an int or a list)."""
    helper = LayerHelper("reverse")
    check_variable("reverse", "x", x)
    out = helper.create_variable_for_type_inference(x.dtype)
    helper.append_op(
        "reverse", {"X": [x]}, {"Out": [out]}, {"axis": _ints("reverse", "axis", axis)}
    )
    return out


def roll(input: Any, shifts: Any, dims: Any = None) -> Any:
    """Rotate elements by ``shifts`` along ``dims`` (without dims: over the flattened tensor)."""
    helper = LayerHelper("roll")
    check_variable("roll", "input", input)
    out = helper.create_variable_for_type_inference(input.dtype)
    helper.append_op(
        "roll",
        {"X": [input]},
        {"Out": [out]},
        {
            "shifts": _ints("roll", "shifts", shifts),
            "dims": [] if dims is None else _ints("roll", "dims", dims),
        },
    )
    return out


def multiplex(inputs: Sequence, index: Any) -> Any:
    """Row i of the result is row i of ``inputs[index[i]]``."""
    helper = LayerHelper("multiplex")
    check_variable(
        "multiplex",
        "inputs",
        list(inputs) if isinstance(inputs, (list, tuple)) else inputs,
        allow_list=True,
    )
    if not isinstance(inputs, (list, tuple)) or len(inputs) < 2:
        raise ArgumentError("multiplex", "inputs must be a list of at least 2 Variables")
    check_variable("multiplex", "index", index)
    out = helper.create_variable_for_type_inference(inputs[0].dtype)
    helper.append_op("multiplex", {"X": list(inputs), "Ids": [index]}, {"Out": [out]})
    return out


def eye(
    num_rows: int,
    num_columns: int | None = None,
    batch_shape: Sequence | None = None,
    dtype: Any = "float32",
) -> Any:
    """An identity matrix [num_rows, num_columns], optionally repeated over ``batch_shape``."""
    helper = LayerHelper("eye")
    for arg, v in (("num_rows", num_rows), ("num_columns", num_columns)):
        if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 0):
            raise ArgumentError("eye", f"{arg} must be a non-negative int, given {v!r}")
    out = helper.create_variable_for_type_inference(convert_dtype(dtype))
    helper.append_op(
        "eye",
        {},
        {"Out": [out]},
        {
            "num_rows": num_rows,
            "num_columns": -1 if num_columns is None else num_columns,
            "dtype": convert_dtype(dtype),
        },
    )
    out.stop_gradient = True
    if batch_shape:
        from oar.layers.manip import expand
        from oar.layers.reshape import reshape

        batch = _ints("eye", "batch_shape", list(batch_shape))
        out = reshape(out, [1] * len(batch) + list(out.shape))
        out = expand(out, batch + [1, 1])
        out.stop_gradient = True
    return out


def diag(diagonal: Any) -> Any:
    """A square matrix with ``diagonal`` (a 1-D Variable or numpy array) on its diagonal."""
    helper = LayerHelper("diag")
    from oar.layer_helper import is_variable

    if not is_variable(diagonal):
        from oar.layers.tensor import assign

        diagonal = assign(diagonal)
    out = helper.create_variable_for_type_inference(diagonal.dtype)
    helper.append_op("diag", {"Diagonal": [diagonal]}, {"Out": [out]})
    out.stop_gradient = True
    return out


def unique(x: Any, dtype: Any = "int32") -> tuple:
    """(distinct values of a 1-D ``x`` in order of first appearance, each element's index into them)."""
    helper = LayerHelper("unique")
    check_variable("unique", "x", x)
    dtype = convert_dtype(dtype)
    if dtype not in ("int32", "int64"):
        raise ArgumentTypeError("unique", f"dtype must be int32 or int64, given {dtype}")
    out = helper.create_variable_for_type_inference(x.dtype)
    index = helper.create_variable_for_type_inference(dtype)
    helper.append_op("unique", {"X": [x]}, {"Out": [out], "Index": [index]}, {"dtype": dtype})
    return out, index


def size(input: Any) -> Any:
    """The number of elements of ``input`` (int64 [1])."""
    helper = LayerHelper("size")
    check_variable("size", "input", input)
    out = helper.create_variable_for_type_inference("int64", stop_gradient=True)
    helper.append_op("size", {"Input": [input]}, {"Out": [out]})
    return out


def _check(op: str, layer: str, x: Any) -> Any:
    helper = LayerHelper(op)
    check_variable(layer, "x", x)
    out = helper.create_variable_for_type_inference("bool", stop_gradient=True)
    helper.append_op(op, {"X": [x]}, {"Out": [out]})
    return out


def isfinite(x: Any) -> Any:
    """[1] bool: every element is finite."""
    return _check("isfinite", "isfinite", x)


def has_inf(x: Any) -> Any:
    """[1] bool: some element is +-inf."""
    return _check("isinf", "has_inf", x)


def has_nan(x: Any) -> Any:
    """[1] bool: some element is NaN."""
    return _check("isnan", "has_nan", x)


def sum(x: Any) -> Any:  # Fluid's name
    """Elementwise sum of a Variable or a list of equal-shaped Variables."""
    from oar.layers.tensor import sums

    return sums(list(x) if isinstance(x, (list, tuple)) else [x])


def unique_with_counts(x: Any, dtype: Any = "int32") -> tuple:
    """Like :func:`unique`, plus how often each distinct value occurs."""
    helper = LayerHelper("unique_with_counts")
    check_variable("unique_with_counts", "x", x)
    dtype = convert_dtype(dtype)
    if dtype not in ("int32", "int64"):
        raise ArgumentTypeError(
            "unique_with_counts", f"dtype must be int32 or int64, given {dtype}"
        )
    out = helper.create_variable_for_type_inference(x.dtype)
    index = helper.create_variable_for_type_inference(dtype)
    count = helper.create_variable_for_type_inference(dtype)
    helper.append_op(
        "unique_with_counts",
        {"X": [x]},
        {"Out": [out], "Index": [index], "Count": [count]},
        {"dtype": dtype},
    )
    return out, index, count


def shard_index(
    input: Any, index_num: int, nshards: int, shard_id: int, ignore_value: int = -1
) -> Any:
    """Map global ids to ids local to shard ``shard_id`` (others become ``ignore_value``)."""
    helper = LayerHelper("shard_index")
    check_variable("shard_index", "input", input)
    out = helper.create_variable_for_type_inference(input.dtype)
    helper.append_op(
        "shard_index",
        {"X": [input]},
        {"Out": [out]},
        {
            "index_num": index_num,
            "nshards": nshards,
            "shard_id": shard_id,
            "ignore_value": ignore_value,
        },
    )
    out.stop_gradient = True
    return out


def merge_selected_rows(x: Any, name: str | None = None) -> Any:
    """A SelectedRows with each row of ``x`` once (repeated rows summed)."""
    helper = LayerHelper("merge_selected_rows", name=name)
    check_variable("merge_selected_rows", "x", x)
    out = helper.create_variable_for_type_inference(x.dtype)
    out.type = "selected_rows"
    helper.append_op("merge_selected_rows", {"X": [x]}, {"Out": [out]})
    return out


def get_tensor_from_selected_rows(x: Any, name: str | None = None) -> Any:
    """The [rows, ...] value tensor stored in the SelectedRows ``x``."""
    helper = LayerHelper("get_tensor_from_selected_rows", name=name)
    check_variable("get_tensor_from_selected_rows", "x", x)
    out = helper.create_variable_for_type_inference(x.dtype)
    helper.append_op("get_tensor_from_selected_rows", {"X": [x]}, {"Out": [out]})
    return out
