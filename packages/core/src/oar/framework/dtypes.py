"""Canonical dtype names: every dtype in oar is a numpy dtype name string."""

from __future__ import annotations

from typing import Any

import numpy as np

SUPPORTED = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64")
FLOATS = ("float16", "float32", "float64")
_ALIASES = {
    "fp16": "float16",
    "fp32": "float32",
    "fp64": "float64",
    "float": "float32",
    "double": "float64",
    "int": "int32",
    "long": "int64",
    "half": "float16",
}


def convert_dtype(dtype: Any) -> str:
    """Turn a str, numpy dtype, numpy type or VarType constant into a canonical name."""
    if isinstance(dtype, str):
        name = _ALIASES.get(dtype.lower(), dtype.lower())
    else:
        try:
            name = np.dtype(dtype).name
        except TypeError:
            raise TypeError(f"unsupported dtype {dtype!r}; supported: {list(SUPPORTED)}") from None
    if name not in SUPPORTED:
        raise TypeError(f"unsupported dtype {dtype!r}; supported: {list(SUPPORTED)}")
    return name


def is_float(dtype: str) -> bool:
    return dtype in FLOATS


class VarType:
    """Fluid's ``core.VarDesc.VarType``: dtype members equal oar's dtype names."""

    BOOL = "bool"
    UINT8 = "uint8"
    INT8 = "int8"
    INT16 = "int16"
    INT32 = "int32"
    INT64 = "int64"
    FP16 = "float16"
    FP32 = "float32"
    FP64 = "float64"
    LOD_TENSOR = "lod_tensor"
    SELECTED_ROWS = "selected_rows"
    LOD_TENSOR_ARRAY = "lod_tensor_array"
    FEED_MINIBATCH = "feed_minibatch"
    FETCH_LIST = "fetch_list"
    STEP_SCOPES = "step_scopes"
    READER = "reader"
    RAW = "raw"
