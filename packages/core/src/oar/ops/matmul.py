"""Matrix products: ``mul`` (flatten to 2-D, then GEMM) and batched ``matmul``."""

from __future__ import annotations

from oar.ops._infer import check_same_dtype, compatible, flatten_to_2d, int_check, meta
from oar.registry import Attr, GradSpec, OpDef


def _infer_mul(ins, attrs):
    x, y = ins["X"], ins["Y"]
    dtype = check_same_dtype(ins, "X", "Y")
    xn, yn = attrs["x_num_col_dims"], attrs["y_num_col_dims"]
    if xn >= len(x.shape):
        raise ValueError(f"x_num_col_dims={xn} must be less than X's rank {len(x.shape)}")
    if yn >= len(y.shape):
        raise ValueError(f"y_num_col_dims={yn} must be less than Y's rank {len(y.shape)}")
    _, xk = flatten_to_2d(x.shape, xn)
    yk, _ = flatten_to_2d(y.shape, yn)
    if not compatible(xk, yk):
        raise ValueError(
            f"X flattened at dim {xn} is {list(flatten_to_2d(x.shape, xn))} but Y flattened at dim {yn} "
            f"is {list(flatten_to_2d(y.shape, yn))}: X's {xk} columns must equal Y's {yk} rows"
        )
    return {"Out": meta(tuple(x.shape[:xn]) + tuple(y.shape[yn:]), dtype, x.lod_level)}


def _infer_matmul(ins, attrs):
    x, y = list(ins["X"].shape), list(ins["Y"].shape)
    dtype = check_same_dtype(ins, "X", "Y")
    x1, y1 = len(x) == 1, len(y) == 1
    if x1:
        x = [1, x[0]]
    if y1:
        y = [y[0], 1]
    if attrs["transpose_X"]:
        x[-1], x[-2] = x[-2], x[-1]
    if attrs["transpose_Y"]:
        y[-1], y[-2] = y[-2], y[-1]
    if not compatible(x[-1], y[-2]):
        raise ValueError(
            f"X{' (transposed)' if attrs['transpose_X'] else ''} has {x[-1]} columns but "
            f"Y{' (transposed)' if attrs['transpose_Y'] else ''} has {y[-2]} rows "
            f"(X {list(ins['X'].shape)}, Y {list(ins['Y'].shape)})"
        )
    bx, by = x[:-2], y[:-2]
    batch = bx if len(bx) >= len(by) else by
    short = by if len(bx) >= len(by) else bx
    batch = list(batch)
    off = len(batch) - len(short)
    for i, d in enumerate(short):
        b = batch[off + i]
        if b == 1:
            batch[off + i] = d
        elif not (d == 1 or compatible(b, d)):
            raise ValueError(
                f"batch dims of X {list(ins['X'].shape)} and Y {list(ins['Y'].shape)} do not broadcast"
            )
    out = batch + ([] if x1 else [x[-2]]) + ([] if y1 else [y[-1]])
    if not out:
        out = [1]
    return {"Out": meta(out, dtype, ins["X"].lod_level)}


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "mul",
            ["X", "Y"],
            ["Out"],
            {
                "x_num_col_dims": Attr(int, 1, int_check(1)),
                "y_num_col_dims": Attr(int, 1, int_check(1)),
            },
            infer_shape=_infer_mul,
            grad=GradSpec(("X", "Y", "Out@GRAD"), ("X@GRAD", "Y@GRAD")),
            share_lod=(("X", "Out"),),
        )
    )
    registry.register_op(
        OpDef(
            "matmul",
            ["X", "Y"],
            ["Out"],
            {
                "transpose_X": Attr(bool, False),
                "transpose_Y": Attr(bool, False),
                "alpha": Attr(float, 1.0),
            },
            infer_shape=_infer_matmul,
            grad=GradSpec(("X", "Y", "Out@GRAD"), ("X@GRAD", "Y@GRAD")),
        )
    )
