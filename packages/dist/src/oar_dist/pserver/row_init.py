"""Rows of a hashed distributed table, initialised when their id is first seen.

Each row is drawn for its id alone, from a counter-based generator (splitmix64 of the table's
seed, the id and the column), so a row's initial value depends only on ``(seed, id)``: the same
in every run, on whichever pserver holds the id, whatever order the ids arrive in. A batch of
new ids is drawn in a few vectorised numpy passes.

The table's initialiser op decides the distribution: ``uniform_random`` (``Uniform``,
``Xavier``/``MSRA`` with ``uniform=True``), ``gaussian_random`` (``Normal``, the normal
``Xavier``/``MSRA``), ``truncated_gaussian_random`` (redrawn beyond two standard deviations),
``fill_constant`` (``Constant``), and ``assign_value`` (``NumpyArrayInitializer``: the id's row
of the array, so only ids in ``[0, dict_size)`` can be initialised). A seed of 0 means a seed
derived from the table's name (the rows must not differ between the runs of one job).
"""

from __future__ import annotations

import zlib

import numpy as np

from oar_dist.pserver.hashed import mix64

KINDS = (
    "uniform_random",
    "gaussian_random",
    "truncated_gaussian_random",
    "fill_constant",
    "assign_value",
)
_VALUES = ("fp32_values", "fp64_values", "int32_values", "int64_values")
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


class RowInitError(ValueError):
    """An id the table's initialiser cannot give a row."""


def spec(op_type: str, attrs: dict, table: str) -> dict:
    """The JSON-able description of a table's initialiser (its startup op)."""
    if op_type not in KINDS:
        raise NotImplementedError(
            f"distributed table '{table}': rows are initialised per id when first seen, which "
            f"oar supports for the Uniform, Normal, TruncatedNormal, Xavier, MSRA, Constant and "
            f"NumpyArrayInitializer initialisers; its startup op is '{op_type}'"
        )
    keep = ("min", "max", "mean", "std", "value", "seed", "dtype", "shape") + _VALUES
    out = {k: attrs[k] for k in keep if k in attrs and attrs[k] is not None}
    seed = int(out.get("seed", 0) or 0)
    out["seed"] = seed or zlib.crc32(f"oar-table-{table}".encode()) or 1
    return {"type": op_type, "attrs": out, "table": table}


def uniform01(seed: int, ids: np.ndarray, dim: int, stream: int = 0) -> np.ndarray:
    """``[len(ids), dim]`` float64 in ``[0, 1)``, a function of ``(seed, stream, id, column)``."""
    mixed = (seed * 0x100000001B3 + stream * 0x632BE59BD9B4E019) % (1 << 64)
    key = mix64(np.array([mixed], dtype=np.uint64))
    per_id = mix64(np.ascontiguousarray(ids, dtype=np.int64).view(np.uint64) ^ key)
    cols = (np.arange(1, dim + 1, dtype=np.uint64) * _GOLDEN)[None, :]
    z = mix64(per_id[:, None] + cols)
    return (z >> np.uint64(11)).astype(np.float64) * (1.0 / (1 << 53))


def _normal(seed: int, ids: np.ndarray, dim: int, stream: int) -> np.ndarray:
    u1 = uniform01(seed, ids, dim, stream)
    u2 = uniform01(seed, ids, dim, stream + 1)
    return np.sqrt(-2.0 * np.log1p(-u1)) * np.cos(2.0 * np.pi * u2)


def _truncated(seed: int, ids: np.ndarray, dim: int) -> np.ndarray:
    out = _normal(seed, ids, dim, 2)
    for k in range(64):  # each round keeps ~95% of what is left: 64 rounds leave nothing
        bad = np.abs(out) > 2
        if not bad.any():
            break
        rows = np.flatnonzero(bad.any(axis=1))
        again = _normal(seed, ids[rows], dim, 4 + 2 * k)
        sub = out[rows]
        sub[bad[rows]] = again[bad[rows]]
        out[rows] = sub
    return np.clip(out, -2.0, 2.0)


def _from_array(s: dict, ids: np.ndarray, dim: int) -> np.ndarray:
    a = s["attrs"]
    height = int(a["shape"][0])
    if ids.size and (ids.min() < 0 or ids.max() >= height):
        bad = ids[(ids < 0) | (ids >= height)]
        raise RowInitError(
            f"distributed table '{s['table']}' is initialised from an array "
            f"(NumpyArrayInitializer) of {height} rows, which has no row for ids "
            f"{bad[:5].tolist()}; give ids in [0, {height}) or a random or constant initializer"
        )
    values = next(a[k] for k in _VALUES if a.get(k))
    return np.asarray(values).reshape(height, dim)[ids]


def init_rows(s: dict, ids: np.ndarray, dim: int, dtype) -> np.ndarray:
    """The initial rows ``[len(ids), dim]`` of ``ids`` for the initialiser ``s`` (:func:`spec`)."""
    ids = np.asarray(ids, dtype=np.int64).reshape(-1)
    a, kind = s["attrs"], s["type"]
    if kind == "fill_constant":
        return np.full((ids.size, dim), a.get("value", 0.0), dtype=dtype)
    if kind == "assign_value":
        return _from_array(s, ids, dim).astype(dtype)
    seed = int(a["seed"])
    if kind == "uniform_random":
        lo, hi = float(a.get("min", -1.0)), float(a.get("max", 1.0))
        out = lo + (hi - lo) * uniform01(seed, ids, dim)
    elif kind == "gaussian_random":
        out = float(a.get("mean", 0.0)) + float(a.get("std", 1.0)) * _normal(seed, ids, dim, 2)
    else:
        out = float(a.get("mean", 0.0)) + float(a.get("std", 1.0)) * _truncated(seed, ids, dim)
    return out.astype(dtype)
