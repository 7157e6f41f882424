"""``PaddleTensor`` / ``PaddleDType`` / ``PaddleBuf`` and the zero-copy tensors of a predictor."""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Any

import numpy as np
from oar.api import LoDTensor


class PaddleDType(enum.IntEnum):
    """The dtypes Fluid 1.8's predictor exchanges (``fluid.core.PaddleDType``)."""

    FLOAT32 = 0
    INT64 = 1
    INT32 = 2

    @property
    def numpy(self) -> np.dtype:
        return np.dtype(_NUMPY[self])

    @classmethod
    def of(cls, dtype: Any, what: str) -> PaddleDType:
        name = np.dtype(dtype).name
        for k, v in _NUMPY.items():
            if v == name:
                return k
        raise TypeError(
            f"{what}: dtype {name} is not one the predictor exchanges; expected one of "
            f"{sorted(_NUMPY.values())} (convert with .astype)"
        )


_NUMPY = {PaddleDType.FLOAT32: "float32", PaddleDType.INT64: "int64", PaddleDType.INT32: "int32"}


def _check_lod(lod: Any, what: str) -> list:
    """Offsets per level (``[[0, 2, 5]]``), as Fluid's predictor takes them."""
    try:
        out = [[int(x) for x in level] for level in (lod or [])]
    except (TypeError, ValueError):
        raise TypeError(f"{what}: lod must be a list of lists of offsets, given {lod!r}") from None
    for level in out:
        if not level or level[0] != 0 or any(b < a for a, b in zip(level, level[1:])):
            raise ValueError(
                f"{what}: each lod level must be non-decreasing offsets starting at 0, given {out}"
            )
    return out


class PaddleBuf:
    """The data of a :class:`PaddleTensor` (Fluid's ``PaddleBuf``)."""

    def __init__(self, array: np.ndarray | None = None) -> None:
        self._array = np.zeros(0, np.float32) if array is None else array

    def length(self) -> int:
        return int(self._array.nbytes)

    def empty(self) -> bool:
        return self._array.size == 0

    def float_data(self) -> list:
        return self._array.astype(np.float32).ravel().tolist()

    def int64_data(self) -> list:
        return self._array.astype(np.int64).ravel().tolist()

    def int32_data(self) -> list:
        return self._array.astype(np.int32).ravel().tolist()

    def tolist(self) -> list:
        return self._array.ravel().tolist()


class PaddleTensor:
    """A named array with LoD, the currency of ``predictor.run`` (Fluid's ``PaddleTensor``).

    ``PaddleTensor(data=None, name='', lod=[], copy=True)``; ``as_ndarray()``
    gives the array back.
    """

    def __init__(
        self,
        data: Any = None,
        name: str = "",
        lod: Sequence | None = None,
        copy: bool = True,
    ) -> None:
        self.name = name
        self.lod = _check_lod(lod, "PaddleTensor")
        if data is None:
            arr = np.zeros(0, np.float32)
        else:
            arr = np.array(data, copy=True) if copy else np.asarray(data)
            if arr.dtype == np.float64:  # a Python float list: Fluid's binding makes float32
                arr = arr.astype(np.float32)
        self.dtype = PaddleDType.of(arr.dtype, f"PaddleTensor '{name}'")
        self._array = arr

    @property
    def shape(self) -> list:
        return list(self._array.shape)

    @shape.setter
    def shape(self, shape: Sequence) -> None:
        self._array = self._array.reshape([int(d) for d in shape])

    @property
    def data(self) -> PaddleBuf:
        return PaddleBuf(self._array)

    def as_ndarray(self) -> np.ndarray:
        return self._array

    def __repr__(self) -> str:
        return f"PaddleTensor(name={self.name!r}, shape={self.shape}, dtype={self.dtype.name})"


class ZeroCopyTensor:
    """An input or output of a predictor, read and written in place (Fluid's ``ZeroCopyTensor``).

    Inputs: ``reshape(shape)``, ``copy_from_cpu(array)``, ``set_lod(offsets)``.
    Outputs (after ``zero_copy_run``): ``copy_to_cpu()``, ``shape()``, ``lod()``.
    """

    def __init__(self, name: str, dtype: str, is_input: bool) -> None:
        self.name = name
        self._dtype = np.dtype(dtype)
        self._is_input = is_input
        self._array: np.ndarray | None = None
        self._lod: list = []

    def _where(self) -> str:
        return f"{'input' if self._is_input else 'output'} tensor '{self.name}'"

    def reshape(self, shape: Sequence) -> None:
        shape = tuple(int(d) for d in shape)
        if any(d < 0 for d in shape):
            raise ValueError(f"{self._where()}: reshape needs known dims, given {list(shape)}")
        if self._array is None or self._array.shape != shape:
            self._array = np.zeros(shape, self._dtype)

    def copy_from_cpu(self, array: Any) -> None:
        if not self._is_input:
            raise ValueError(f"{self._where()}: copy_from_cpu is for input tensors")
        array = np.asarray(array)
        if array.dtype != self._dtype:
            raise TypeError(
                f"{self._where()}: expects {self._dtype.name} data, given {array.dtype.name} "
                f"(convert with .astype('{self._dtype.name}'))"
            )
        buf = self._array
        if buf is None or buf.shape != array.shape:
            self._array = buf = np.empty(array.shape, self._dtype)
        np.copyto(buf, array)  # the predictor owns its input memory: one copy, no allocation

    def copy_to_cpu(self) -> np.ndarray:
        if self._array is None:
            raise ValueError(
                f"{self._where()}: has no data"
                + (
                    " (call copy_from_cpu first)"
                    if self._is_input
                    else " (run zero_copy_run first)"
                )
            )
        return self._array

    def set_lod(self, lod: Sequence) -> None:
        self._lod = _check_lod(lod, self._where())

    def lod(self) -> list:
        return [list(level) for level in self._lod]

    def shape(self) -> list:
        return [] if self._array is None else list(self._array.shape)

    def type(self) -> PaddleDType:
        return PaddleDType.of(self._dtype, self._where())

    def _feed_value(self) -> Any:
        if self._array is None:
            raise ValueError(f"{self._where()}: no data given (call copy_from_cpu before running)")
        if self._lod:
            return LoDTensor(self._array, self._lod)
        return self._array

    def _set_result(self, value: Any) -> None:
        if isinstance(value, LoDTensor):
            self._lod = value.lod()
            value = np.asarray(value)
        else:
            self._lod = []
        self._array = value

    def __repr__(self) -> str:
        return f"ZeroCopyTensor({self._where()}, shape={self.shape()}, dtype={self._dtype.name})"
