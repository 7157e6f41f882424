"""2-D convolutions: ``conv2d``, ``depthwise_conv2d``, ``conv2d_transpose`` and ``depthwise_conv2d_transpose``.

Slots and attrs follow Fluid: Input, Filter -> Output; ``strides``, ``paddings``
(2 values = symmetric per axis, 4 = top, bottom, left, right), ``dilations``,
``groups``, ``padding_algorithm`` (EXPLICIT, SAME, VALID) and ``data_format``.
:func:`resolve_paddings` is shared with the kernels so shapes and values agree.
"""

from __future__ import annotations

from collections.abc import Sequence

from oar.ops._infer import check_float, check_same_dtype, int_check, meta, one_of
from oar.registry import Attr, GradSpec, OpDef


def _pairs(name: str, n: int):
    def check(v):
        if len(v) != n or any((not isinstance(i, int)) or i <= 0 for i in v):
            return f"must be {n} positive ints"
        return None

    return check


def _check_paddings(v):
    if len(v) not in (2, 4) or any((not isinstance(i, int)) or i < 0 for i in v):
        return "must be 2 or 4 non-negative ints"
    return None


def resolve_paddings(
    paddings: Sequence[int],
    algorithm: str,
    in_hw: Sequence[int],
    k_hw: Sequence[int],
    strides: Sequence[int],
    dilations: Sequence[int],
) -> tuple:
    """``(top, bottom, left, right), dilations`` as Fluid computes them for the padding algorithm.

    SAME pads so that ``out = ceil(in / stride)`` and, as in Fluid, drops the
    dilation; VALID pads nothing; EXPLICIT expands 2 values to 4.
    """
    if algorithm == "VALID":
        return (0, 0, 0, 0), tuple(dilations)
    if algorithm == "SAME":
        pads = []
        for size, k, s in zip(in_hw, k_hw, strides):
            if size < 0:
                pads += [0, 0]
                continue
            out = -(-size // s)
            total = max((out - 1) * s + k - size, 0)
            pads += [total // 2, total - total // 2]
        return tuple(pads), (1, 1)
    p = list(paddings)
    if len(p) == 2:
        p = [p[0], p[0], p[1], p[1]]
    return tuple(p), tuple(dilations)


def conv_out_size(size: int, k: int, before: int, after: int, stride: int, dilation: int) -> int:
    """Output length of a convolution along one axis (-1 when the input length is unknown)."""
    if size < 0:
        return -1
    return (size + before + after - (dilation * (k - 1) + 1)) // stride + 1


def _nchw(shape, data_format, op, slot):
    if len(shape) != 4:
        raise ValueError(f"{op}: {slot} must be 4-D ({data_format}), given shape {list(shape)}")
    if data_format == "NHWC":
        return shape[0], shape[3], shape[1], shape[2]
    return tuple(shape)


def _infer_conv(op_type):
    def infer(ins, attrs):
        x, w = ins["Input"], ins["Filter"]
        check_float(ins, "Input")
        dtype = check_same_dtype(ins, "Input", "Filter")
        fmt = attrs["data_format"]
        n, c, h, wd = _nchw(x.shape, fmt, op_type, "Input")
        if len(w.shape) != 4:
            raise ValueError(
                f"{op_type}: Filter must be 4-D [out_channels, in_channels/groups, kh, kw], "
                f"given shape {list(w.shape)}"
            )
        oc, cg, kh, kw = w.shape
        g = attrs["groups"]
        if c >= 0 and c % g:
            raise ValueError(
                f"{op_type}: input channels {c} (Input shape {list(x.shape)}) are not divisible "
                f"by groups={g}"
            )
        if oc % g:
            raise ValueError(
                f"{op_type}: Filter's {oc} output channels are not divisible by groups={g}"
            )
        if c >= 0 and c // g != cg:
            raise ValueError(
                f"{op_type}: Input has {c} channels, so with groups={g} the Filter needs {c // g} input "
                f"channels per group, but Filter shape {list(w.shape)} has {cg}"
            )
        pads, dil = resolve_paddings(
            attrs["paddings"],
            attrs["padding_algorithm"],
            (h, wd),
            (kh, kw),
            attrs["strides"],
            attrs["dilations"],
        )
        oh = conv_out_size(h, kh, pads[0], pads[1], attrs["strides"][0], dil[0])
        ow = conv_out_size(wd, kw, pads[2], pads[3], attrs["strides"][1], dil[1])
        if (h >= 0 and oh <= 0) or (wd >= 0 and ow <= 0):
            raise ValueError(
                f"{op_type}: the filter ({kh}x{kw}, dilations {list(dil)}) does not fit the padded input "
                f"({h}x{wd}, paddings {list(pads)}): output would be {oh}x{ow}"
            )
        out = (n, oh, ow, oc) if fmt == "NHWC" else (n, oc, oh, ow)
        return {"Output": meta(out, dtype)}

    return infer


def transpose_out_size(
    size: int, k: int, before: int, after: int, stride: int, dilation: int
) -> int:
    if size < 0:
        return -1
    return (size - 1) * stride - before - after + dilation * (k - 1) + 1


def _infer_conv_transpose(ins, attrs):
    x, w = ins["Input"], ins["Filter"]
    check_float(ins, "Input")
    dtype = check_same_dtype(ins, "Input", "Filter")
    fmt = attrs["data_format"]
    n, c, h, wd = _nchw(x.shape, fmt, "conv2d_transpose", "Input")
    if len(w.shape) != 4:
        raise ValueError(
            f"conv2d_transpose: Filter must be 4-D [in_channels, out_channels/groups, kh, kw], "
            f"given shape {list(w.shape)}"
        )
    ci, og, kh, kw = w.shape
    g = attrs["groups"]
    if c >= 0 and c != ci:
        raise ValueError(
            f"conv2d_transpose: Input has {c} channels but Filter shape {list(w.shape)} expects "
            f"{ci} input channels"
        )
    if ci % g:
        raise ValueError(f"conv2d_transpose: input channels {ci} are not divisible by groups={g}")
    strides = attrs["strides"]
    pads, dil = resolve_paddings(
        attrs["paddings"],
        attrs["padding_algorithm"],
        (h, wd),
        (kh, kw),
        strides,
        attrs["dilations"],
    )
    full = [
        transpose_out_size(h, kh, pads[0], pads[1], strides[0], dil[0]),
        transpose_out_size(wd, kw, pads[2], pads[3], strides[1], dil[1]),
    ]
    size = list(attrs["output_size"])
    if size:
        for i, (mn, want) in enumerate(zip(full, size)):
            if mn >= 0 and not mn <= want < mn + strides[i]:
                raise ValueError(
                    f"conv2d_transpose: output_size {size} is not reachable: dim {i} must be in "
                    f"[{mn}, {mn + strides[i] - 1}] for this input, filter and stride"
                )
        full = size
    if any(0 <= f <= 0 for f in full):
        raise ValueError(
            f"conv2d_transpose: output would be {full} (paddings {list(pads)} too large)"
        )
    oc = og * g
    out = (n, full[0], full[1], oc) if fmt == "NHWC" else (n, oc, full[0], full[1])
    return {"Output": meta(out, dtype)}


def conv_attrs(transpose: bool = False) -> dict:
    a = {
        "strides": Attr(list, [1, 1], _pairs("strides", 2)),
        "paddings": Attr(list, [0, 0], _check_paddings),
        "dilations": Attr(list, [1, 1], _pairs("dilations", 2)),
        "groups": Attr(int, 1, int_check(1)),
        "padding_algorithm": Attr(str, "EXPLICIT", one_of("EXPLICIT", "SAME", "VALID")),
        "data_format": Attr(str, "NCHW", one_of("NCHW", "NHWC", "AnyLayout")),
        "workspace_size_MB": Attr(int, 512),
        "exhaustive_search": Attr(bool, False),
        "fuse_relu_before_depthwise_conv": Attr(bool, False),
        "is_test": Attr(bool, False),
    }
    if transpose:
        a["output_size"] = Attr(list, [])
        del a["fuse_relu_before_depthwise_conv"], a["exhaustive_search"]
    return a


def register(registry) -> None:
    grad = GradSpec(("Input", "Filter", "Output@GRAD"), ("Input@GRAD", "Filter@GRAD"))
    for name in ("conv2d", "depthwise_conv2d"):
        registry.register_op(
            OpDef(
                name,
                ["Input", "Filter"],
                ["Output"],
                conv_attrs(),
                infer_shape=_infer_conv(name),
                grad=grad,
                kernel_dtype="Input",
                doc="2-D convolution (im2col + GEMM on the CPU)",
            )
        )
    for name in ("conv2d_transpose", "depthwise_conv2d_transpose"):
        registry.register_op(
            OpDef(
                name,
                ["Input", "Filter"],
                ["Output"],
                conv_attrs(True),
                infer_shape=_infer_conv_transpose,
                grad=grad,
                kernel_dtype="Input",
                doc="transposed 2-D convolution (the gradient of conv2d w.r.t. its input)",
            )
        )
