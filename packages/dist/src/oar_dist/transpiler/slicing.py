"""Parameter blocks: how a parameter is cut into row blocks, and which pserver holds each block.

``slice_param`` follows Fluid's rule: at most one block per pserver, each of at
least ``min_block_size`` elements, cut on whole rows. ``RoundRobin`` and
``HashName`` are Fluid's dispatchers (``config.split_method``); ``HashName``
hashes with CRC-32, which is the same in every process (Fluid used Python's
``hash``, which differs between processes when string hashing is randomised).
"""

from __future__ import annotations

import math
import zlib
from typing import Any

import attrs


@attrs.define
class ParamBlock:
    param: str
    index: int
    rows: int
    offset: int
    shape: tuple
    whole: bool
    endpoint: str = ""

    @property
    def name(self) -> str:
        return self.param if self.whole else f"{self.param}.block{self.index}"

    @property
    def grad_name(self) -> str:
        g = self.param + "@GRAD"
        return g if self.whole else f"{g}.block{self.index}"


def slice_param(param: str, shape: Any, parts: int, min_block_size: int) -> list:
    shape = tuple(int(d) for d in shape)
    numel = math.prod(shape) if shape else 1
    count = 1
    if parts > 1 and shape and numel >= 2 * min_block_size:
        count = min(parts, max(1, numel // max(1, min_block_size)))
    if count <= 1:
        return [ParamBlock(param, 0, shape[0] if shape else 1, 0, shape, True)]
    row = math.prod(shape[1:]) if len(shape) > 1 else 1
    rows_per = math.ceil(math.ceil(numel / count) / row)
    blocks, at = [], 0
    while at < shape[0]:
        n = min(rows_per, shape[0] - at)
        blocks.append(ParamBlock(param, len(blocks), n, at, (n,) + shape[1:], False))
        at += n
    if len(blocks) == 1:
        blocks[0].whole = True
    return blocks


class PSDispatcher:
    """Fluid's dispatcher interface: ``dispatch(varlist) -> [endpoint per var]``."""

    def __init__(self, pserver_endpoints: list) -> None:
        self._eps = list(pserver_endpoints)
        self._step = 0

    @property
    def eps(self) -> list:
        return self._eps

    def reset(self) -> None:
        self._step = 0

    def dispatch(self, varlist: list) -> list:
        raise NotImplementedError


class RoundRobin(PSDispatcher):
    """Blocks to pservers in turn."""

    def dispatch(self, varlist: list) -> list:
        out = []
        for _ in varlist:
            out.append(self._eps[self._step])
            self._step = (self._step + 1) % len(self._eps)
        return out


class HashName(PSDispatcher):
    """A block goes to the pserver its name hashes to (CRC-32)."""

    def dispatch(self, varlist: list) -> list:
        return [self._eps[zlib.crc32(_name(v).encode()) % len(self._eps)] for v in varlist]


def _name(v: Any) -> str:
    n = getattr(v, "name", v)
    return n() if callable(n) else str(n)


def dispatch(blocks: list, eps: list, split_method: Any) -> None:
    cls = split_method if split_method is not None else RoundRobin
    if not (isinstance(cls, type) and issubclass(cls, PSDispatcher)) and not callable(cls):
        raise TypeError(
            f"DistributeTranspilerConfig.split_method must be RoundRobin, HashName or a "
            f"PSDispatcher subclass, given {split_method!r}"
        )
    eplist = cls(eps).dispatch(blocks)
    if len(eplist) != len(blocks) or any(e not in eps for e in eplist):
        raise ValueError(
            f"split_method {cls!r} returned endpoints {eplist} for {len(blocks)} blocks"
        )
    for b, ep in zip(blocks, eplist):
        b.endpoint = ep


_VALUES = ("fp32_values", "fp64_values", "int32_values", "int64_values", "bool_values")


def shard_attrs(attrs: dict, shape: list, b: ParamBlock | None) -> dict:
    """The attrs of an initializer op made to create one row block ``b`` of shape ``shape``:
    the shape changes, and ``assign_value`` (``NumpyArrayInitializer``) keeps the block's rows."""
    attrs = dict(attrs)
    if "shape" in attrs:
        if b is not None and not b.whole and attrs["shape"] and list(attrs["shape"]) != list(shape):
            row = math.prod(attrs["shape"][1:])
            for key in _VALUES:
                if attrs.get(key):
                    attrs[key] = list(attrs[key][b.offset * row : (b.offset + b.rows) * row])
        attrs["shape"] = list(shape)
    return attrs
