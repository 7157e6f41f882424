"""Turning samples and batches into feed arrays, checked against their data layers.

Shared by :class:`~oar_data.feeder.DataFeeder` and the PyReader/DataLoader
workers, so both give the same errors: each names the data layer, the sample
index, what the layer declares and what was given.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from oar.api import LoDTensor, lengths_to_offsets
from oar.errors import DtypeError, FeedError, ShapeError


class FieldSpec:
    """What one data layer accepts: name, dtype, per-batch shape, lod level."""

    __slots__ = ("name", "dtype", "shape", "lod_level", "sample_shape", "sample_size")

    def __init__(self, var: Any) -> None:
        if isinstance(var, str):
            raise TypeError(f"feed_list items must be data Variables, given the string '{var}'")
        if not hasattr(var, "name") or not hasattr(var, "dtype"):
            raise TypeError(f"feed_list items must be data Variables, given {type(var).__name__}")
        # no reference to the Variable: worker threads hold specs, and must not keep the program alive
        self.name = var.name
        self.dtype = np.dtype(var.dtype or "float32")
        self.shape = list(var.shape) if var.shape is not None else None
        self.lod_level = int(getattr(var, "lod_level", 0) or 0)
        # per-sample shape: the declared shape without its batch dim
        if self.shape and self.shape[0] < 0:
            self.sample_shape = self.shape[1:]
        else:
            self.sample_shape = self.shape[1:] if self.shape else []
        known = all(d >= 0 for d in self.sample_shape)
        self.sample_size = int(np.prod(self.sample_shape)) if known else None

    def describe(self) -> str:
        return f"data layer '{self.name}' (shape {self.shape}, dtype {self.dtype.name}, lod_level {self.lod_level})"


def specs_for(feed_list: Sequence, program: Any = None) -> list:
    """FieldSpecs for Variables or names (names are looked up in ``program``)."""
    out = []
    for item in feed_list:
        if isinstance(item, str):
            if program is None:
                from oar.api import default_main_program

                program = default_main_program()
            var = program.global_block()._find_var_recursive(item)
            if var is None:
                raise ValueError(f"DataFeeder: the program has no variable named '{item}'")
            item = var
        out.append(FieldSpec(item))
    return out


def _dtype_ok(given: np.dtype, want: np.dtype) -> bool:
    """Whether values of ``given`` may be cast to ``want`` without losing their meaning."""
    if given == want:
        return True
    g, w = given.kind, want.kind
    if g == "b":
        return w in "biuf"
    if g in "iu":
        return w in "iuf"
    if g == "f":
        return w == "f"
    return False


def _bad_dtype(spec: FieldSpec, idx: int | None, given: Any, what: str) -> DtypeError:
    where = f"sample {idx}" if idx is not None else "the batch"
    return DtypeError(
        f"{what}: field '{spec.name}' of {where} has dtype {given}, which cannot be fed to "
        f"{spec.describe()}; convert it with .astype('{spec.dtype.name}')"
    )


def _field_array(spec: FieldSpec, value: Any, idx: int, what: str) -> np.ndarray:
    arr = np.asarray(value)
    if arr.dtype == object:
        raise ShapeError(
            f"{what}: field '{spec.name}' of sample {idx} is ragged or not numeric; "
            f"{spec.describe()} expects per-sample shape {spec.sample_shape}"
        )
    if not _dtype_ok(arr.dtype, spec.dtype):
        raise _bad_dtype(spec, idx, arr.dtype.name, what)
    return arr


def _dense_field(spec: FieldSpec, samples: Sequence, i: int, what: str) -> np.ndarray:
    values = [s[i] for s in samples]
    arr = None
    try:
        arr = np.asarray(values)
    except ValueError:  # ragged
        arr = None
    if (
        arr is None
        or arr.dtype == object
        or not _dtype_ok(arr.dtype, spec.dtype)
        or (spec.sample_size is not None and arr.size != spec.sample_size * len(values))
    ):
        # find the culprit sample for the message
        for idx, v in enumerate(values):
            a = _field_array(spec, v, idx, what)
            if spec.sample_size is not None and a.size != spec.sample_size:
                raise ShapeError(
                    f"{what}: field '{spec.name}' of sample {idx} has shape {list(a.shape)} "
                    f"({a.size} values), but {spec.describe()} expects per-sample shape "
                    f"{spec.sample_shape} ({spec.sample_size} values)"
                )
        if spec.sample_size is None:
            shapes = sorted({tuple(np.shape(v)) for v in values})
            raise ShapeError(
                f"{what}: the samples of field '{spec.name}' have different shapes {shapes}"
            )
        # every sample has the right number of values, in differing layouts (e.g. (6,) and (2, 3))
        arr = np.stack([np.asarray(v, dtype=spec.dtype).reshape(spec.sample_shape) for v in values])
    arr = arr.astype(spec.dtype, copy=False)
    if spec.sample_size is not None and spec.shape is not None:
        arr = arr.reshape([len(values)] + spec.sample_shape)
    return arr


def _flatten_lod(
    spec: FieldSpec, value: Any, level: int, lengths: list, leaves: list, idx: int, what: str
) -> None:
    if level == 0:
        leaves.append(value)
        return
    try:
        n = len(value)
    except TypeError:
        raise ShapeError(
            f"{what}: field '{spec.name}' of sample {idx} must be a sequence nested {spec.lod_level} "
            f"deep for {spec.describe()}, given {type(value).__name__}"
        ) from None
    lengths[spec.lod_level - level].append(n)
    for v in value:
        _flatten_lod(spec, v, level - 1, lengths, leaves, idx, what)


def _lod_field(spec: FieldSpec, samples: Sequence, i: int, what: str) -> LoDTensor:
    lengths: list = [[] for _ in range(spec.lod_level)]
    rows = []
    for idx, s in enumerate(samples):
        leaves: list = []
        _flatten_lod(spec, s[i], spec.lod_level, lengths, leaves, idx, what)
        if leaves:
            a = _field_array(spec, leaves, idx, what)
            rows.append(a.reshape(len(leaves), -1))
    per_row = spec.sample_shape
    if rows:
        data = np.concatenate(rows, axis=0)
    else:
        data = np.zeros([0] + [max(d, 0) for d in per_row], dtype=spec.dtype)
    if spec.sample_size is not None:
        if data.size != spec.sample_size * data.shape[0]:
            raise ShapeError(
                f"{what}: the sequence items of field '{spec.name}' have {data.size // max(data.shape[0], 1)} "
                f"values each, but {spec.describe()} expects per-item shape {per_row}"
            )
        data = data.reshape([data.shape[0]] + per_row)
    data = data.astype(spec.dtype, copy=False)
    return LoDTensor(data, [lengths_to_offsets(lvl) for lvl in lengths])


def samples_to_feed(specs: Sequence, samples: Sequence, what: str = "DataFeeder") -> dict:
    """A feed dict from a list of sample tuples (one value per data layer, in order)."""
    if not isinstance(samples, (list, tuple)):
        samples = list(samples)
    n = len(specs)
    for idx, s in enumerate(samples):
        if not isinstance(s, (list, tuple)) or len(s) != n:
            got = f"{len(s)} fields" if isinstance(s, (list, tuple)) else f"a {type(s).__name__}"
            raise FeedError(
                f"{what}: sample {idx} has {got}, but the feed list has {n} data layers "
                f"{[sp.name for sp in specs]}; each sample must be a tuple with one value per layer"
            )
    out = {}
    for i, spec in enumerate(specs):
        out[spec.name] = (
            _lod_field(spec, samples, i, what)
            if spec.lod_level > 0
            else _dense_field(spec, samples, i, what)
        )
    return out


def batch_to_feed(specs: Sequence, batch: Sequence, what: str = "PyReader") -> dict:
    """A feed dict from one batch given as a list of arrays or LoDTensors (one per data layer)."""
    if isinstance(batch, dict):
        batch = [batch[s.name] for s in specs]
    if not isinstance(batch, (list, tuple)) or len(batch) != len(specs):
        got = (
            f"{len(batch)} values"
            if isinstance(batch, (list, tuple))
            else f"a {type(batch).__name__}"
        )
        raise FeedError(
            f"{what}: a batch must be a list with one array or LoDTensor per data layer "
            f"{[s.name for s in specs]}, given {got}"
        )
    out = {}
    for spec, value in zip(specs, batch):
        if isinstance(value, LoDTensor):
            arr = np.asarray(value)
            if not _dtype_ok(arr.dtype, spec.dtype):
                raise _bad_dtype(spec, None, arr.dtype.name, what)
            out[spec.name] = LoDTensor(arr.astype(spec.dtype, copy=False), value.lod())
            continue
        arr = np.asarray(value)
        if arr.dtype == object or not _dtype_ok(arr.dtype, spec.dtype):
            raise _bad_dtype(spec, None, arr.dtype.name, what)
        arr = arr.astype(spec.dtype, copy=False)
        if spec.shape is not None:
            arr = _check_batch_shape(spec, arr, what)
        out[spec.name] = arr
    return out


def _check_batch_shape(spec: FieldSpec, arr: np.ndarray, what: str) -> np.ndarray:
    declared = spec.shape
    if len(declared) == arr.ndim and all(d < 0 or d == g for d, g in zip(declared, arr.shape)):
        return arr
    if (
        spec.sample_size is not None
        and arr.ndim >= 1
        and arr.size == arr.shape[0] * spec.sample_size
        and declared[0] < 0
    ):
        return arr.reshape([arr.shape[0]] + spec.sample_shape)
    raise ShapeError(
        f"{what}: the batch for field '{spec.name}' has shape {list(arr.shape)}, but "
        f"{spec.describe()} expects {declared} (-1 = any size)"
    )


def samples_to_arrays(samples: Sequence, what: str = "DataLoader") -> list:
    """Dygraph (no data layers): one stacked array per field of the sample tuples."""
    samples = list(samples)
    if not samples:
        raise FeedError(f"{what}: an empty batch")
    n = len(samples[0]) if isinstance(samples[0], (list, tuple)) else None
    for idx, s in enumerate(samples):
        if not isinstance(s, (list, tuple)) or len(s) != n:
            raise FeedError(f"{what}: sample {idx} is not a tuple of {n} fields like sample 0")
    out = []
    for i in range(n):
        try:
            arr = np.asarray([s[i] for s in samples])
        except ValueError:
            arr = None
        if arr is None or arr.dtype == object:
            shapes = sorted({tuple(np.shape(s[i])) for s in samples})
            raise ShapeError(f"{what}: field {i} of the samples has differing shapes {shapes}")
        out.append(arr)
    return out


def batch_to_arrays(batch: Sequence, what: str = "DataLoader") -> list:
    """Dygraph (no data layers): the batch's fields as arrays (LoDTensors kept)."""
    if not isinstance(batch, (list, tuple)):
        raise FeedError(f"{what}: a batch must be a list of arrays, given a {type(batch).__name__}")
    return [v if isinstance(v, LoDTensor) else np.asarray(v) for v in batch]
