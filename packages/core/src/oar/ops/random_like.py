"""Random ops sized from another tensor or sampling from it: uniform/gaussian_random_batch_size_like,
sampling_id."""

from __future__ import annotations

from oar.ops._infer import check_float, dtype_check, meta
from oar.ops.creation import infer_batch_like
from oar.registry import Attr, OpDef


def _infer_sampling(ins, attrs):
    check_float(ins, "X")
    x = ins["X"]
    if len(x.shape) != 2:
        raise ValueError(f"X must be [batch, classes] probabilities, given shape {list(x.shape)}")
    if attrs["min"] >= attrs["max"]:
        raise ValueError(f"min {attrs['min']} must be less than max {attrs['max']}")
    return {"Out": meta([x.shape[0]], "int64")}


def _like_attrs() -> dict:
    return {
        "shape": Attr(list),
        "input_dim_idx": Attr(int, 0),
        "output_dim_idx": Attr(int, 0),
        "seed": Attr(int, 0),
        "dtype": Attr(str, "float32", dtype_check),
    }


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "uniform_random_batch_size_like",
            ["Input"],
            ["Out"],
            {
                **_like_attrs(),
                "min": Attr(float, -1.0),
                "max": Attr(float, 1.0),
                "diag_num": Attr(int, 0),
                "diag_step": Attr(int, 0),
                "diag_val": Attr(float, 1.0),
            },
            infer_shape=infer_batch_like,
            kernel_dtype="attr:dtype",
        )
    )
    registry.register_op(
        OpDef(
            "gaussian_random_batch_size_like",
            ["Input"],
            ["Out"],
            {**_like_attrs(), "mean": Attr(float, 0.0), "std": Attr(float, 1.0)},
            infer_shape=infer_batch_like,
            kernel_dtype="attr:dtype",
        )
    )
    registry.register_op(
        OpDef(
            "sampling_id",
            ["X"],
            ["Out"],
            {"min": Attr(float, 0.0), "max": Attr(float, 1.0), "seed": Attr(int, 0)},
            infer_shape=_infer_sampling,
        )
    )
