"""Tensor-array ops the executor runs itself: they update a list held by the run's values.

They compute only with the arrays' own methods and operators (indexing, ``+``), so they
work on any device's arrays (numpy, cupy).

``write_to_array`` stores an item (growing the list); the gradients that flow
into an array (``read_from_array_grad``, ``tensor_array_to_tensor_grad``) add
into the gradient array in place, so an array read at several places or in
several loop iterations collects the sum without ``sum`` ops over lists.
"""

from __future__ import annotations

from typing import Any

from oar.errors import OpRuntimeError
from oar.executor.block_ops import HostCall, host_op
from oar.kernel_entry import EMPTY_VAR
from oar.lod_tensor import LoDTensor, LoDTensorArray


@host_op("write_to_array")
class WriteToArrayCall(HostCall):
    """``Out[I] = X``: the array grows (with empty slots) to hold index ``I``."""

    def __init__(self, plan: Any, op: Any) -> None:
        self.op = op
        self.x = op.inputs["X"][0]
        self.i = op.inputs["I"][0]
        self.out = op.outputs["Out"][0]
        self.singles = (("X", self.x), ("I", self.i))

    def run(self, env: dict, lods: dict | None = None) -> None:
        arr = _array(env, self.out)
        i = index_value(env[self.i], self.op)
        value = env[self.x]
        lod = lods.get(self.x) if lods else None
        if lod:
            value = LoDTensor(value, lod)
        if i >= len(arr):
            arr.extend([None] * (i + 1 - len(arr)))
        arr[i] = value


def _array(env: dict, name: str) -> LoDTensorArray:
    arr = env.get(name)
    if arr is None:
        arr = env[name] = LoDTensorArray()
    return arr


def add_item(arr: list, i: int, value: Any) -> None:
    """``arr[i] += value`` (``arr[i] = value`` where empty), growing ``arr`` as needed."""
    if i >= len(arr):
        arr.extend([None] * (i + 1 - len(arr)))
    cur = arr[i]
    if cur is None:
        arr[i] = value
    else:
        lod = cur._lod if isinstance(cur, LoDTensor) else None
        a = cur._array if isinstance(cur, LoDTensor) else cur
        b = value._array if isinstance(value, LoDTensor) else value
        total = a + b
        arr[i] = LoDTensor(total, lod) if lod else total


@host_op("read_from_array_grad")
class ReadFromArrayGradCall(HostCall):
    """``X@GRAD[I] += Out@GRAD``."""

    def __init__(self, plan: Any, op: Any) -> None:
        self.op = op
        self.i = op.inputs["I"][0]
        self.g = op.inputs["Out@GRAD"][0]
        self.out = op.outputs["X@GRAD"][0]
        self.singles = (("I", self.i), ("Out@GRAD", self.g))

    def run(self, env: dict, lods: dict | None = None) -> None:
        if self.out == EMPTY_VAR:
            return
        g = env[self.g]
        lod = lods.get(self.g) if lods else None
        add_item(
            _array(env, self.out),
            index_value(env[self.i], self.op),
            LoDTensor(g, lod) if lod else g,
        )


@host_op("tensor_array_to_tensor_grad")
class ArrayToTensorGradCall(HostCall):
    """Split ``Out@GRAD`` back into the items' shapes and add them into ``X@GRAD``."""

    def __init__(self, plan: Any, op: Any) -> None:
        self.op = op
        self.x = op.inputs["X"][0]
        self.g = op.inputs["Out@GRAD"][0]
        self.out = op.outputs["X@GRAD"][0]
        self.axis = int(op.attrs.get("axis", 1))
        self.stack = bool(op.attrs.get("use_stack", False))
        self.singles = (("X", self.x), ("Out@GRAD", self.g))

    def run(self, env: dict, lods: dict | None = None) -> None:
        if self.out == EMPTY_VAR:
            return
        items = [v._array if isinstance(v, LoDTensor) else v for v in env[self.x]]
        g = env[self.g]
        arr = _array(env, self.out)
        axis = self.axis if self.axis >= 0 else self.axis + g.ndim
        lead = (slice(None),) * axis
        # copies: g's buffer may be reused once this op has run
        if self.stack:  # item i is g[..., i, ...]
            for i in range(len(items)):
                add_item(arr, i, g[lead + (i,)].copy())
            return
        start = 0
        for i, it in enumerate(items):
            stop = start + int(it.shape[axis])
            add_item(arr, i, g[lead + (slice(start, stop),)].copy())
            start = stop


def index_value(value: Any, op: Any) -> int:
    """An array index held by a one-element int tensor."""
    if isinstance(value, LoDTensor):
        value = value._array
    if getattr(value, "size", None) != 1 or getattr(value, "dtype", None) is None:
        raise OpRuntimeError(
            f"op '{op.type}': the index I must hold one integer, given {getattr(value, 'shape', value)}",
            callsite=op.callsite,
            created=True,
        )
    i = int(value.reshape(-1)[0])
    if i < 0:
        raise OpRuntimeError(
            f"op '{op.type}': array index {i} is negative", callsite=op.callsite, created=True
        )
    return i
