"""``paddle.compat``: text/bytes conversion and Python-2-era numeric helpers, as Fluid 1.8 has them."""

from __future__ import annotations

import math
from typing import Any

__all__ = ["long_type", "to_text", "to_bytes", "round", "floor_division", "get_exception_message"]

long_type = int


def _convert(obj: Any, encoding: str, inplace: bool, one: Any) -> Any:
    if obj is None:
        return obj
    if isinstance(obj, list):
        if inplace:
            obj[:] = [one(x, encoding) for x in obj]
            return obj
        return [one(x, encoding) for x in obj]
    if isinstance(obj, set):
        if inplace:
            items = [one(x, encoding) for x in obj]
            obj.clear()
            obj.update(items)
            return obj
        return {one(x, encoding) for x in obj}
    if isinstance(obj, dict):
        items = {one(k, encoding): one(v, encoding) for k, v in obj.items()}
        if inplace:
            obj.clear()
            obj.update(items)
            return obj
        return items
    return one(obj, encoding)


def _text(x: Any, encoding: str) -> Any:
    return x.decode(encoding) if isinstance(x, bytes) else x


def _bytes(x: Any, encoding: str) -> Any:
    return x.encode(encoding) if isinstance(x, str) else x


def to_text(obj: Any, encoding: str = "utf-8", inplace: bool = False) -> Any:
    """Decode bytes (or the bytes in a list/set/dict) to str."""
    return _convert(obj, encoding, inplace, _text)


def to_bytes(obj: Any, encoding: str = "utf-8", inplace: bool = False) -> Any:
    """Encode str (or the str in a list/set/dict) to bytes."""
    return _convert(obj, encoding, inplace, _bytes)


def round(x: float, d: int = 0) -> float:
    """Round half away from zero (Python 2's rule): ``round(2.5) == 3.0``, ``round(-2.5) == -3.0``."""
    p = 10**d
    if x > 0:
        return float(math.floor((x * p) + math.copysign(0.5, x))) / p
    if x < 0:
        return float(math.ceil((x * p) + math.copysign(0.5, x))) / p
    return math.copysign(0.0, x)


def floor_division(x: Any, y: Any) -> Any:
    return x // y


def get_exception_message(exc: BaseException) -> str:
    """The message of an exception (``str(exc)``)."""
    if exc is None:
        raise AssertionError("exc must not be None")
    return str(exc)
