"""Text-matching ops of Fluid 1.8's contrib (the MatchPyramid family), over LoD batches.

- ``match_matrix_tensor``: for each pair of sequences x (rows of X) and y (rows of Y) and
  each channel t, the matrix ``x W[:, t, :] y^T``; Out holds them per pair, channel-major
  ([dim_t, len_x, len_y] flattened, one column), Tmp is ``X @ W`` ([rows_x * dim_t * h]).
- ``var_conv_2d``: a 2-D convolution of each instance's [InputChannel, rows, cols] image
  (rows and cols from the LoD of ROW and COLUMN; X holds the images flattened, one column),
  zero padding ``kernel // 2`` before, output ``ceil(rows / stride)`` by
  ``ceil(cols / stride)`` per channel; Col holds the im2col columns.
- ``sequence_topk_avg_pooling``: for each instance's [channel_num, rows, cols] matrix, row
  and channel, the sum of the k largest values over the columns divided by k, for each k of
  ``topks``; Out [rows, channel_num * len(topks)] with ROW's LoD; pos the column indices
  of the largest values, [rows, channel_num, max(topks)] per instance (-1 past the width).
"""

from __future__ import annotations

from oar.ops._infer import check_float, check_same_dtype, meta
from oar.registry import Attr, GradSpec, OpDef


def _positive(v):
    return None if v >= 1 else "must be >= 1"


def _infer_match(ins, attrs):
    x, y, w = ins["X"], ins["Y"], ins["W"]
    check_float(ins, "X")
    check_same_dtype(ins, "X", "Y", "W")
    h = x.shape[-1]
    if len(x.shape) != 2 or len(y.shape) != 2 or len(w.shape) != 3:
        raise ValueError(
            f"match_matrix_tensor: X [rows, h], Y [rows, h] and W [h, dim_t, h] expected, given "
            f"{list(x.shape)}, {list(y.shape)}, {list(w.shape)}"
        )
    if tuple(w.shape) != (h, attrs["dim_t"], y.shape[-1]):
        raise ValueError(
            f"match_matrix_tensor: W must be [{h}, {attrs['dim_t']}, {y.shape[-1]}], "
            f"given {list(w.shape)}"
        )
    return {"Out": meta((-1, 1), x.dtype, 1), "Tmp": meta((-1, 1), x.dtype)}


def _infer_var_conv(ins, attrs):
    check_float(ins, "X")
    check_same_dtype(ins, "X", "W")
    w = ins["W"]
    k = attrs["InputChannel"] * attrs["KernelH"] * attrs["KernelW"]
    if tuple(w.shape) != (attrs["OutputChannel"], k):
        raise ValueError(
            f"var_conv_2d: W must be [OutputChannel, InputChannel * KernelH * KernelW] = "
            f"[{attrs['OutputChannel']}, {k}], given {list(w.shape)}"
        )
    dtype = ins["X"].dtype
    return {"Out": meta((-1, 1), dtype, 1), "Col": meta((-1, 1), dtype, 1)}


def _infer_topk(ins, attrs):
    check_float(ins, "X")
    topks = attrs["topks"]
    if not topks or any(k < 1 for k in topks):
        raise ValueError(f"sequence_topk_avg_pooling: topks must be positive ints, given {topks}")
    width = attrs["channel_num"] * len(topks)
    return {"Out": meta((-1, width), ins["X"].dtype, 1), "pos": meta((-1,), "int32")}


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "match_matrix_tensor",
            ["X", "Y", "W"],
            ["Out", "Tmp"],
            {"dim_t": Attr(int, 1, _positive)},
            infer_shape=_infer_match,
            kernel_dtype="X",
            grad=GradSpec(("X", "Y", "W", "Out@GRAD"), ("X@GRAD", "Y@GRAD", "W@GRAD")),
            doc="per sequence pair and channel t: x W[:, t, :] y^T, channel-major, one column",
        )
    )
    registry.register_op(
        OpDef(
            "var_conv_2d",
            ["X", "ROW", "COLUMN", "W"],
            ["Out", "Col"],
            {
                "InputChannel": Attr(int, 1, _positive),
                "OutputChannel": Attr(int, 1, _positive),
                "KernelH": Attr(int, 1, _positive),
                "KernelW": Attr(int, 1, _positive),
                "StrideH": Attr(int, 1, _positive),
                "StrideW": Attr(int, 1, _positive),
            },
            infer_shape=_infer_var_conv,
            kernel_dtype="X",
            grad=GradSpec(("X", "ROW", "COLUMN", "W", "Out@GRAD"), ("X@GRAD", "W@GRAD")),
            doc="2-D convolution of each instance's [channels, rows, cols] image (LoD sizes)",
        )
    )
    registry.register_op(
        OpDef(
            "sequence_topk_avg_pooling",
            ["X", "ROW", "COLUMN"],
            ["Out", "pos"],
            {"topks": Attr(list, [1]), "channel_num": Attr(int, 1, _positive)},
            infer_shape=_infer_topk,
            kernel_dtype="X",
            grad=GradSpec(("X", "ROW", "COLUMN", "Out@GRAD"), ("X@GRAD",)),
            doc="per row and channel, the mean of the k largest values over the columns",
        )
    )
