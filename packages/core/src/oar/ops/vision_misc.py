"""Small vision ops: space_to_depth, temporal_shift, unfold, fsp, crop,
bilinear_tensor_product.

``space_to_depth`` keeps Fluid's (Darknet "reorg") element order, which is not the
channel-blocked order of other frameworks; ``unfold``'s ``paddings`` are
``[top, left, bottom, right]``.
"""

from __future__ import annotations

from oar.ops._infer import check_float, check_same_dtype, compatible, meta
from oar.registry import Attr, GradSpec, OpDef


def _positive(v):
    return None if v > 0 else "must be positive"


def _infer_s2d(ins, attrs):
    x, b = ins["X"], attrs["blocksize"]
    if len(x.shape) != 4:
        raise ValueError(f"space_to_depth: X must be 4-D NCHW, given {list(x.shape)}")
    n, c, h, w = x.shape
    for name, v, m in (("channels", c, b * b), ("height", h, b), ("width", w, b)):
        if v >= 0 and v % m:
            raise ValueError(
                f"space_to_depth: the {name} of X {list(x.shape)} must be divisible by {m}"
            )
    return {
        "Out": meta(
            (n, c * b * b if c >= 0 else -1, h // b if h >= 0 else -1, w // b if w >= 0 else -1),
            x.dtype,
        )
    }


def _infer_tshift(ins, attrs):
    x = ins["X"]
    if len(x.shape) != 4:
        raise ValueError(f"temporal_shift: X must be 4-D [N*T, C, H, W], given {list(x.shape)}")
    if x.shape[0] >= 0 and x.shape[0] % attrs["seg_num"]:
        raise ValueError(
            f"temporal_shift: the batch {x.shape[0]} must be divisible by seg_num={attrs['seg_num']}"
        )
    if not 0 <= attrs["shift_ratio"] <= 0.5:
        raise ValueError(
            f"temporal_shift: shift_ratio must be in [0, 0.5], given {attrs['shift_ratio']}"
        )
    return {"Out": x}


def unfold_geometry(hw, attrs) -> tuple:
    """``(out_h, out_w)`` of unfold (paddings [top, left, bottom, right])."""
    k, s, p, d = attrs["kernel_sizes"], attrs["strides"], attrs["paddings"], attrs["dilations"]
    oh = (hw[0] + p[0] + p[2] - (d[0] * (k[0] - 1) + 1)) // s[0] + 1
    ow = (hw[1] + p[1] + p[3] - (d[1] * (k[1] - 1) + 1)) // s[1] + 1
    return oh, ow


def _infer_unfold(ins, attrs):
    x = ins["X"]
    if len(x.shape) != 4:
        raise ValueError(f"unfold: X must be 4-D NCHW, given {list(x.shape)}")
    n, c, h, w = x.shape
    oh, ow = unfold_geometry((h, w), attrs)
    if h >= 0 and w >= 0 and (oh <= 0 or ow <= 0):
        raise ValueError(
            f"unfold: the kernel {attrs['kernel_sizes']} does not fit the padded input {[h, w]}"
        )
    k = attrs["kernel_sizes"]
    return {
        "Y": meta(
            (n, c * k[0] * k[1] if c >= 0 else -1, oh * ow if h >= 0 and w >= 0 else -1), x.dtype
        )
    }


def _infer_fsp(ins, attrs):
    x, y = ins["X"], ins["Y"]
    dtype = check_same_dtype(ins, "X", "Y")
    if (
        len(x.shape) != 4
        or len(y.shape) != 4
        or not all(map(compatible, (x.shape[0], *x.shape[2:]), (y.shape[0], *y.shape[2:])))
    ):
        raise ValueError(
            f"fsp: X and Y must be NCHW with the same N, H and W, given {list(x.shape)} and {list(y.shape)}"
        )
    return {"Out": meta((x.shape[0], x.shape[1], y.shape[1]), dtype)}


def _infer_crop(ins, attrs):
    x = ins["X"]
    if ins.get("Y") is not None:
        shape = list(ins["Y"].shape)
    else:
        shape = list(attrs["shape"])
    if len(shape) != len(x.shape):
        raise ValueError(f"crop: the shape {shape} must have as many dims as X {list(x.shape)}")
    offsets = attrs["offsets"]
    if ins.get("Offsets") is None and offsets:
        if len(offsets) != len(x.shape):
            raise ValueError(
                f"crop: offsets {offsets} must have one value per dim of X {list(x.shape)}"
            )
        for i, (o, s, d) in enumerate(zip(offsets, shape, x.shape)):
            if d >= 0 and s >= 0 and (o < 0 or o + s > d):
                raise ValueError(f"crop: dim {i}: offset {o} + size {s} exceeds X's {d}")
    return {"Out": meta(shape, x.dtype)}


def _infer_btp(ins, attrs):
    x, y, w = ins["X"], ins["Y"], ins["Weight"]
    check_float(ins, "X")
    dtype = check_same_dtype(ins, "X", "Y", "Weight")
    if len(x.shape) != 2 or len(y.shape) != 2 or len(w.shape) != 3:
        raise ValueError(
            f"bilinear_tensor_product: X [N, dx], Y [N, dy], Weight [size, dx, dy] expected, given "
            f"{list(x.shape)}, {list(y.shape)}, {list(w.shape)}"
        )
    if not (
        compatible(x.shape[0], y.shape[0])
        and compatible(w.shape[1], x.shape[1])
        and compatible(w.shape[2], y.shape[1])
    ):
        raise ValueError(
            f"bilinear_tensor_product: X {list(x.shape)}, Y {list(y.shape)} and Weight {list(w.shape)} do not agree"
        )
    return {"Out": meta((x.shape[0], w.shape[0]), dtype)}


def _pairs(n):
    def check(v):
        return None if len(v) == n and all(isinstance(i, int) for i in v) else f"must be {n} ints"

    return check


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "space_to_depth",
            ["X"],
            ["Out"],
            {"blocksize": Attr(int, 2, _positive)},
            infer_shape=_infer_s2d,
            grad=GradSpec(("X", "Out@GRAD"), ("X@GRAD",)),
        )
    )
    registry.register_op(
        OpDef(
            "temporal_shift",
            ["X"],
            ["Out"],
            {"seg_num": Attr(int, 1, _positive), "shift_ratio": Attr(float, 0.25)},
            infer_shape=_infer_tshift,
            grad=GradSpec(("Out@GRAD",), ("X@GRAD",)),
        )
    )
    registry.register_op(
        OpDef(
            "unfold",
            ["X"],
            ["Y"],
            {
                "kernel_sizes": Attr(list, [1, 1], _pairs(2)),
                "strides": Attr(list, [1, 1], _pairs(2)),
                "paddings": Attr(list, [0, 0, 0, 0], _pairs(4)),
                "dilations": Attr(list, [1, 1], _pairs(2)),
            },
            infer_shape=_infer_unfold,
            grad=GradSpec(("X", "Y@GRAD"), ("X@GRAD",)),
        )
    )
    registry.register_op(
        OpDef(
            "fsp",
            ["X", "Y"],
            ["Out"],
            {},
            infer_shape=_infer_fsp,
            grad=GradSpec(("X", "Y", "Out@GRAD"), ("X@GRAD", "Y@GRAD")),
        )
    )
    registry.register_op(
        OpDef(
            "crop",
            ["X", "Y?", "Offsets?"],
            ["Out"],
            {"offsets": Attr(list, []), "shape": Attr(list, [])},
            infer_shape=_infer_crop,
            grad=GradSpec(("X", "Offsets", "Out@GRAD"), ("X@GRAD",)),
        )
    )
    registry.register_op(
        OpDef(
            "bilinear_tensor_product",
            ["X", "Y", "Weight", "Bias?"],
            ["Out"],
            {},
            infer_shape=_infer_btp,
            grad=GradSpec(
                ("X", "Y", "Weight", "Out@GRAD"), ("X@GRAD", "Y@GRAD", "Weight@GRAD", "Bias@GRAD")
            ),
        )
    )
