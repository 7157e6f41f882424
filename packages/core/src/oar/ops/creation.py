"""Ops that create tensors: fill_constant, *_batch_size_like, random fills, assign_value."""

from __future__ import annotations

from oar.framework.dtypes import convert_dtype
from oar.ops._infer import dtype_check, meta
from oar.registry import Attr, OpDef


def _dtype_attr(default="float32"):
    return Attr(str, default, dtype_check)


def _infer_fill(ins, attrs):
    shape = attrs["shape"]
    if ins.get("ShapeTensor") is not None:
        shape = [-1] * max(
            len(shape), ins["ShapeTensor"].shape[0] if ins["ShapeTensor"].shape else 0
        )
    return {"Out": meta(shape, convert_dtype(attrs["dtype"]))}


def infer_batch_like(ins, attrs):
    shape = list(attrs["shape"])
    src = ins["Input"].shape
    i, o = attrs["input_dim_idx"], attrs["output_dim_idx"]
    if not 0 <= i < len(src):
        raise ValueError(f"input_dim_idx {i} is out of range for Input of rank {len(src)}")
    if not 0 <= o < len(shape):
        raise ValueError(f"output_dim_idx {o} is out of range for shape {shape}")
    shape[o] = src[i]
    return {"Out": meta(shape, convert_dtype(attrs["dtype"]))}


def _infer_like(ins, attrs):
    x = ins["X"]
    dtype = attrs.get("dtype")
    return {"Out": meta(x.shape, convert_dtype(dtype) if dtype else x.dtype)}


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "fill_constant",
            ["ShapeTensor?"],
            ["Out"],
            {
                "shape": Attr(list, []),
                "dtype": _dtype_attr(),
                "value": Attr(float, 0.0),
                "str_value": Attr(str, ""),
                "force_cpu": Attr(bool, False),
            },
            infer_shape=_infer_fill,
            kernel_dtype="attr:dtype",
        )
    )
    registry.register_op(
        OpDef(
            "fill_constant_batch_size_like",
            ["Input"],
            ["Out"],
            {
                "shape": Attr(list),
                "dtype": _dtype_attr(),
                "value": Attr(float, 0.0),
                "str_value": Attr(str, ""),
                "input_dim_idx": Attr(int, 0),
                "output_dim_idx": Attr(int, 0),
                "force_cpu": Attr(bool, False),
            },
            infer_shape=infer_batch_like,
            kernel_dtype="attr:dtype",
        )
    )
    registry.register_op(OpDef("fill_zeros_like", ["X"], ["Out"], {}, infer_shape=_infer_like))
    registry.register_op(
        OpDef(
            "fill_any_like",
            ["X"],
            ["Out"],
            {"value": Attr(float, 0.0), "dtype": Attr(str, "")},
            infer_shape=_infer_like,
        )
    )
    for name in ("uniform_random", "gaussian_random"):
        extra = (
            {
                "min": Attr(float, -1.0),
                "max": Attr(float, 1.0),
                "diag_num": Attr(int, 0),
                "diag_step": Attr(int, 0),
                "diag_val": Attr(float, 1.0),
            }
            if name == "uniform_random"
            else {"mean": Attr(float, 0.0), "std": Attr(float, 1.0)}
        )
        registry.register_op(
            OpDef(
                name,
                ["ShapeTensor?"],
                ["Out"],
                {"shape": Attr(list), "dtype": _dtype_attr(), "seed": Attr(int, 0), **extra},
                infer_shape=_infer_fill,
                kernel_dtype="attr:dtype",
            )
        )
    registry.register_op(
        OpDef(
            "truncated_gaussian_random",
            [],
            ["Out"],
            {
                "shape": Attr(list),
                "dtype": _dtype_attr(),
                "seed": Attr(int, 0),
                "mean": Attr(float, 0.0),
                "std": Attr(float, 1.0),
            },
            infer_shape=_infer_fill,
            kernel_dtype="attr:dtype",
        )
    )
    registry.register_op(
        OpDef(
            "assign_value",
            [],
            ["Out"],
            {
                "shape": Attr(list),
                "dtype": _dtype_attr(),
                "fp32_values": Attr(list, []),
                "int32_values": Attr(list, []),
                "int64_values": Attr(list, []),
                "bool_values": Attr(list, []),
                "fp64_values": Attr(list, []),
            },
            infer_shape=_infer_fill,
            kernel_dtype="attr:dtype",
        )
    )
