"""Tensor arrays (Fluid's LoDTensorArray): write, read, length, and concatenation.

An array variable (type ``lod_tensor_array``) holds a Python list of tensors
at run time; its declared shape and dtype are those of one item, as in Fluid.
``write_to_array`` and the gradients that add into an array are run by the
executor itself (``oar.executor.array_ops``), since they update the list in
place; the others are ordinary kernels (``oar_kernels_cpu.kernels.tensor_array``).
"""

from __future__ import annotations

from oar.ops._infer import meta
from oar.registry import Attr, GradOpDesc, OpDef


def _check_index(ins) -> None:
    i = ins["I"]
    if i.dtype not in ("int32", "int64"):
        raise TypeError(f"the index I must be an int64 tensor of shape [1], given {i.dtype}")


def _infer_write(ins, attrs):
    _check_index(ins)
    x = ins["X"]
    return {"Out": meta(x.shape, x.dtype, x.lod_level)}


def _infer_read(ins, attrs):
    _check_index(ins)
    return {"Out": ins["X"]}


def _infer_length(ins, attrs):
    return {"Out": meta([1], "int64")}


def _infer_to_tensor(ins, attrs):
    x = ins["X"]
    shape = list(x.shape)
    axis = attrs["axis"]
    if attrs["use_stack"]:
        axis = axis if axis >= 0 else axis + len(shape) + 1
        shape.insert(axis, -1)
    elif shape:
        axis = axis if axis >= 0 else axis + len(shape)
        if not 0 <= axis < len(shape):
            raise ValueError(f"axis {attrs['axis']} is out of range for items of shape {x.shape}")
        shape[axis] = -1
    return {"Out": meta(shape, x.dtype), "OutIndex": meta([-1], "int32")}


def _write_grad(ctx):
    return [
        GradOpDesc(
            "write_to_array_grad",
            {"X": ctx.input("X"), "I": ctx.input("I"), "Out@GRAD": ctx.output_grad("Out")},
            {"X@GRAD": ctx.input_grad("X")},
        )
    ]


def _read_grad(ctx):
    return [
        GradOpDesc(
            "read_from_array_grad",
            {"I": ctx.input("I"), "Out@GRAD": ctx.output_grad("Out")},
            {"X@GRAD": ctx.input_grad("X")},
        )
    ]


def _to_tensor_grad(ctx):
    return [
        GradOpDesc(
            "tensor_array_to_tensor_grad",
            {"X": ctx.input("X"), "Out@GRAD": ctx.output_grad("Out")},
            {"X@GRAD": ctx.input_grad("X")},
            dict(ctx.attrs),
        )
    ]


def register(registry) -> None:
    registry.register_op(
        OpDef("write_to_array", ["X", "I"], ["Out"], {}, infer_shape=_infer_write, grad=_write_grad)
    )
    registry.register_op(
        OpDef("write_to_array_grad", ["X", "I", "Out@GRAD"], ["X@GRAD"], {}, kernel_dtype="X")
    )
    registry.register_op(
        OpDef("read_from_array", ["X", "I"], ["Out"], {}, infer_shape=_infer_read, grad=_read_grad)
    )
    registry.register_op(OpDef("read_from_array_grad", ["I", "Out@GRAD"], ["X@GRAD"], {}))
    registry.register_op(OpDef("lod_array_length", ["X"], ["Out"], {}, infer_shape=_infer_length))
    registry.register_op(
        OpDef(
            "tensor_array_to_tensor",
            ["X"],
            ["Out", "OutIndex"],
            {"axis": Attr(int, 1), "use_stack": Attr(bool, False)},
            infer_shape=_infer_to_tensor,
            grad=_to_tensor_grad,
        )
    )
    registry.register_op(
        OpDef(
            "tensor_array_to_tensor_grad",
            ["X", "Out@GRAD"],
            ["X@GRAD"],
            {"axis": Attr(int, 1), "use_stack": Attr(bool, False)},
        )
    )
