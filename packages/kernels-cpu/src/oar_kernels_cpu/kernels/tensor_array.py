"""Kernels of the tensor-array family: reading, length and concatenation of arrays.

An array value is a list of arrays (or LoDTensors, for items written with LoD);
writes and the gradients that add into arrays are host ops of the executor
(``oar.executor.array_ops``).
"""

from __future__ import annotations

import numpy as np
from oar.api import LoDTensor

from oar_kernels_cpu.kernels import array_module, kernel

xp = array_module(__name__)


def _index(value) -> int:
    return int(value.reshape(-1)[0])


def _item(arr, i: int, what: str):
    if not 0 <= i < len(arr) or arr[i] is None:
        raise IndexError(f"{what}: index {i} holds no tensor (the array has {len(arr)} items)")
    return arr[i]


@kernel("read_from_array", lod=True)
def read_from_array(inputs, attrs):
    return {"Out": _item(inputs["X"], _index(inputs["I"]), "read_from_array")}


@kernel("write_to_array_grad", lod=True)
def write_to_array_grad(inputs, attrs):
    arr, i = inputs.get("Out@GRAD") or [], _index(inputs["I"])
    if i < len(arr) and arr[i] is not None:
        return {"X@GRAD": arr[i]}
    x = inputs["X"]
    x = x._array if isinstance(x, LoDTensor) else x
    return {"X@GRAD": xp.zeros_like(x)}


@kernel("lod_array_length")
def lod_array_length(inputs, attrs):
    return {"Out": xp.asarray([len(inputs["X"])], dtype=np.int64)}


@kernel("tensor_array_to_tensor")
def tensor_array_to_tensor(inputs, attrs):
    items = [v._array if isinstance(v, LoDTensor) else v for v in inputs["X"]]
    if not items or any(v is None for v in items):
        raise ValueError("tensor_array_to_tensor: the array is empty or has unwritten items")
    axis = attrs["axis"]
    if attrs["use_stack"]:
        out = xp.stack(items, axis=axis)
        sizes = [1] * len(items)
    else:
        out = xp.concatenate(items, axis=axis)
        sizes = [v.shape[axis] for v in items]
    return {"Out": out, "OutIndex": xp.asarray(sizes, dtype=np.int32)}
