"""LoDTensor (an array plus level-of-detail offsets) and SelectedRows (sparse rows)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from oar.user_array import user_array


def lengths_to_offsets(lengths: Sequence) -> list:
    out = [0]
    for n in lengths:
        out.append(out[-1] + int(n))
    return out


def offsets_to_lengths(offsets: Sequence) -> list:
    return [int(b) - int(a) for a, b in zip(offsets[:-1], offsets[1:])]


class LoDTensor:
    """A dense array with optional LoD; ``np.array(t)`` gives the data.

    LoD is stored as offsets (``[[0, 3, 4, 6]]``); the API also speaks
    recursive sequence lengths (``[[3, 1, 2]]``).
    """

    __slots__ = ("_array", "_lod", "_place")

    def __init__(self, array: Any = None, lod: Sequence | None = None, place: Any = None) -> None:
        self._array = array
        self._lod = [list(map(int, lvl)) for lvl in lod] if lod else []
        self._place = place

    # --- data ---------------------------------------------------------------------------------
    def set(self, array: Any, place: Any = None) -> None:
        """Copy ``array`` in (Fluid semantics: the tensor owns its data)."""
        if isinstance(array, LoDTensor):
            array = array._array
        self._array = np.array(array, copy=True)
        self._place = place

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        a = self._array
        if a is None:
            raise ValueError(
                "this LoDTensor holds no data yet (call set() or run the program that fills it)"
            )
        if not isinstance(a, np.ndarray):
            a = a.get() if hasattr(a, "get") else np.asarray(a)
        if dtype is not None:
            return a.astype(dtype, copy=bool(copy))
        # numpy 2 asks for copy=True from np.array(t): honour it, or the caller aliases our storage
        return a.copy() if copy else a

    def shape(self) -> list:
        return [] if self._array is None else list(self._array.shape)

    def _dtype(self) -> str:
        return self._array.dtype.name

    def numpy(self) -> np.ndarray:
        """A copy of the data; 1-element results convert with ``float()`` on every NumPy.

        (``np.array(t)`` always gives a plain ``ndarray``: NumPy's rule, see docs/numpy2.md.)
        """
        return user_array(np.array(self))

    def _is_initialized(self) -> bool:
        return self._array is not None

    def _place_(self) -> Any:
        return self._place

    # --- LoD ------------------------------------------------------------------------------------
    def lod(self) -> list:
        return [list(lvl) for lvl in self._lod]

    def set_lod(self, lod: Sequence) -> None:
        lod = [list(map(int, lvl)) for lvl in lod]
        for i, lvl in enumerate(lod):
            if not lvl or lvl[0] != 0 or any(b < a for a, b in zip(lvl, lvl[1:])):
                raise ValueError(
                    f"LoD level {i} must be non-decreasing offsets starting at 0, given {lvl}"
                )
        self._lod = lod

    def recursive_sequence_lengths(self) -> list:
        return [offsets_to_lengths(lvl) for lvl in self._lod]

    def set_recursive_sequence_lengths(self, lengths: Sequence) -> None:
        self._lod = [lengths_to_offsets(lvl) for lvl in lengths]

    def has_valid_recursive_sequence_lengths(self) -> bool:
        if not self._lod:
            return True
        for upper, lower in zip(self._lod, self._lod[1:]):
            if upper[-1] != len(lower) - 1:
                return False
        n = 0 if self._array is None else self._array.shape[0] if self._array.ndim else 1
        return self._lod[-1][-1] == n and all(lvl[0] == 0 for lvl in self._lod)

    def __repr__(self) -> str:
        """Shape, dtype, LoD and a preview of the values (what a user wants at a prompt)."""
        if self._array is None:
            return f"LoDTensor(not initialized, lod={self._lod})"
        a = np.asarray(self._array)
        preview = np.array2string(a, threshold=24, edgeitems=3, precision=4, prefix="  ")
        return f"LoDTensor(shape={list(a.shape)}, dtype={a.dtype}, lod={self._lod},\n  {preview})"

    __str__ = __repr__


Tensor = LoDTensor


class LoDTensorArray(list):
    """Fluid's LoDTensorArray: a list of tensors (``create_array`` / ``array_write`` values).

    Items are numpy arrays or :class:`LoDTensor` (when the written value had LoD); an
    index written past the end leaves ``None`` in the skipped slots.
    """

    def __repr__(self) -> str:
        return f"LoDTensorArray({len(self)} tensors)"


def _host_rows(rows: Any) -> np.ndarray:
    """Row ids live on the host (Fluid keeps them in a CPU vector); a device array of ids
    (cupy's ``.get()``) is copied back rather than implicitly converted."""
    if not isinstance(rows, np.ndarray) and callable(getattr(rows, "get", None)):
        rows = rows.get()
    return np.asarray(rows, dtype=np.int64)


class SelectedRows:
    """Sparse rows of a ``[height, ...]`` tensor: ``value[i]`` is row ``rows[i]``.

    Rows may repeat (several lookups of one id); ``to_dense`` sums them.
    """

    __slots__ = ("_rows", "_height", "_value")

    def __init__(self, rows: Sequence | None = None, height: int = 0, value: Any = None) -> None:
        self._rows = _host_rows(rows if rows is not None else [])
        self._height = int(height)
        self._value = value

    def rows(self) -> list:
        return self._rows.tolist()

    def set_rows(self, rows: Sequence) -> None:
        self._rows = _host_rows(rows)

    def height(self) -> int:
        return self._height

    def set_height(self, height: int) -> None:
        self._height = int(height)

    def get_tensor(self) -> LoDTensor:
        return LoDTensor(self._value)

    @property
    def value(self) -> Any:
        return self._value

    @property
    def row_array(self) -> np.ndarray:
        return self._rows

    def to_dense(self) -> np.ndarray:
        """The dense tensor, on the host (rows looked up twice are summed)."""
        v = self._value
        v = v.get() if not isinstance(v, np.ndarray) and callable(getattr(v, "get", None)) else v
        v = np.asarray(v)
        out = np.zeros((self._height,) + v.shape[1:], dtype=v.dtype)
        np.add.at(out, self._rows, v)
        return out

    def __repr__(self) -> str:
        v = np.asarray(self._value) if self._value is not None else None
        rows = self._rows[:8].tolist() + (["..."] if len(self._rows) > 8 else [])
        detail = "" if v is None else f", value shape={list(v.shape)}, dtype={v.dtype}"
        return f"SelectedRows(height={self._height}, rows={rows}{detail})"


def create_lod_tensor(data: Any, recursive_seq_lens: Sequence, place: Any) -> LoDTensor:
    """A LoDTensor from a numpy array, a list of sequences, or another LoDTensor."""
    if isinstance(data, LoDTensor):
        return create_lod_tensor(np.array(data), recursive_seq_lens, place)
    if isinstance(data, list) and data and isinstance(data[0], (list, tuple)):
        lengths = [len(seq) for seq in data]
        if [lengths] != [list(x) for x in recursive_seq_lens][-1:] and len(recursive_seq_lens) == 1:
            raise ValueError(
                f"create_lod_tensor: the data's sequence lengths {lengths} do not match recursive_seq_lens {recursive_seq_lens}"
            )
        flat = np.concatenate([np.asarray(s) for s in data]).reshape(-1, 1)
        data = flat.astype("int64") if flat.dtype.kind in "iu" else flat
    arr = np.asarray(data)
    t = LoDTensor()
    t.set(arr, place)
    t.set_recursive_sequence_lengths(recursive_seq_lens)
    if not t.has_valid_recursive_sequence_lengths():
        raise ValueError(
            f"create_lod_tensor: recursive_seq_lens {list(map(list, recursive_seq_lens))} do not fit data "
            f"with {arr.shape[0] if arr.ndim else 0} rows (the last level must sum to the row count, "
            f"each level to the number of sequences of the next)"
        )
    return t


def create_random_int_lodtensor(
    recursive_seq_lens: Sequence, base_shape: Sequence, place: Any, low: int, high: int
) -> LoDTensor:
    n = sum(recursive_seq_lens[-1])
    data = np.random.randint(low, high + 1, size=[n] + list(base_shape)).astype("int64")
    return create_lod_tensor(data, recursive_seq_lens, place)
