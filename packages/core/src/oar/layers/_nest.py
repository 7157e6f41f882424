"""Nested structures (lists, tuples, namedtuples, dicts of variables) as the 1.8 cell API
passes states around: flatten, map_structure, pack_sequence_as (Fluid's layers.utils)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any


def is_sequence(x: Any) -> bool:
    return isinstance(x, (list, tuple, dict))


def _items(x: Any) -> list:
    if isinstance(x, dict):
        return [x[k] for k in sorted(x)]
    return list(x)


def flatten(nest: Any) -> list:
    """The leaves of ``nest`` in order (dicts by sorted key)."""
    if not is_sequence(nest):
        return [nest]
    out: list = []
    for item in _items(nest):
        out += flatten(item)
    return out


def _pack(structure: Any, flat: Sequence, pos: int) -> tuple:
    if not is_sequence(structure):
        return flat[pos], pos + 1
    items = []
    for item in _items(structure):
        packed, pos = _pack(item, flat, pos)
        items.append(packed)
    if isinstance(structure, dict):
        return dict(zip(sorted(structure), items)), pos
    if isinstance(structure, tuple) and hasattr(structure, "_fields"):
        return type(structure)(*items), pos
    return type(structure)(items), pos


def pack_sequence_as(structure: Any, flat: Sequence) -> Any:
    """``flat`` (leaves) rebuilt into the shape of ``structure``."""
    want = len(flatten(structure))
    if len(flat) != want:
        raise ValueError(
            f"pack_sequence_as: the structure has {want} leaves, given {len(flat)} values"
        )
    return _pack(structure, list(flat), 0)[0]


def assert_same_structure(a: Any, b: Any, what: str = "structures") -> None:
    if is_sequence(a) != is_sequence(b) or (is_sequence(a) and (len(_items(a)) != len(_items(b)))):
        raise ValueError(f"{what} differ: {_describe(a)} vs {_describe(b)}")
    if is_sequence(a):
        for x, y in zip(_items(a), _items(b)):
            assert_same_structure(x, y, what)


def _describe(x: Any) -> str:
    if not is_sequence(x):
        return "a tensor"
    return f"{type(x).__name__} of {len(_items(x))}"


def map_structure(fn: Callable, *structures: Any) -> Any:
    """``fn`` applied leaf by leaf across ``structures`` (all of one shape)."""
    for s in structures[1:]:
        assert_same_structure(structures[0], s)
    flats = [flatten(s) for s in structures]
    return pack_sequence_as(structures[0], [fn(*leaves) for leaves in zip(*flats)])
