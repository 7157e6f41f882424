"""numpy kernel of hash: XXH64 (the public xxHash 64-bit spec) of each row's bytes.

Uses the ``xxhash`` package when it is installed, else the pure-Python XXH64 below (the
same numbers, slower). Numpy-only (``generic=False``): hashing runs on the host.
"""

from __future__ import annotations

import numpy as np

from oar_kernels_cpu.kernels import kernel
from oar_kernels_cpu.kernels._sequence import array_of, with_lod

try:
    import xxhash as _xxhash
except ImportError:  # pragma: no cover - depends on the environment
    _xxhash = None

_P1, _P2, _P3 = 11400714785074694791, 14029467366897019727, 1609587929392839161
_P4, _P5 = 9650029242287828579, 2870177450012600261
_M = (1 << 64) - 1


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (64 - r))) & _M


def _round(acc: int, lane: int) -> int:
    return (_rotl((acc + lane * _P2) & _M, 31) * _P1) & _M


def _merge(acc: int, val: int) -> int:
    return ((acc ^ _round(0, val)) * _P1 + _P4) & _M


def _lane(data: bytes, i: int, width: int = 8) -> int:
    return int.from_bytes(data[i : i + width], "little")


def xxh64(data: bytes, seed: int = 0) -> int:
    """XXH64 of ``data`` (pure Python)."""
    n, i = len(data), 0
    if n >= 32:
        v = [(seed + _P1 + _P2) & _M, (seed + _P2) & _M, seed & _M, (seed - _P1) & _M]
        while i + 32 <= n:
            v = [_round(v[k], _lane(data, i + 8 * k)) for k in range(4)]
            i += 32
        h = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & _M
        for k in range(4):
            h = _merge(h, v[k])
    else:
        h = (seed + _P5) & _M
    h = (h + n) & _M
    while i + 8 <= n:
        h = (_rotl(h ^ _round(0, _lane(data, i)), 27) * _P1 + _P4) & _M
        i += 8
    if i + 4 <= n:
        h = (_rotl(h ^ ((_lane(data, i, 4) * _P1) & _M), 23) * _P2 + _P3) & _M
        i += 4
    while i < n:
        h = (_rotl(h ^ ((data[i] * _P5) & _M), 11) * _P1) & _M
        i += 1
    h = ((h ^ (h >> 33)) * _P2) & _M
    h = ((h ^ (h >> 29)) * _P3) & _M
    return h ^ (h >> 32)


def _hasher():
    if _xxhash is not None:
        return lambda data, seed: _xxhash.xxh64_intdigest(data, seed)
    return xxh64


@kernel("hash", ("int32", "int64"), lod=True, generic=False)
def hash_kernel(inputs, attrs):
    t = inputs["X"]
    x = np.ascontiguousarray(array_of(t))
    num, mod = attrs["num_hash"], attrs["mod_by"]
    h = _hasher()
    out = np.array(
        [[h(row.tobytes(), seed) % mod for seed in range(num)] for row in x], dtype=np.int64
    ).reshape(len(x), num, 1)
    return {"Out": with_lod(out, getattr(t, "_lod", []))}
