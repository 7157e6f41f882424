"""Rearranging and masking ops: pixel_shuffle, shuffle_channel, crop_tensor, pad_constant_like,
tril_triu, scatter_nd_add, randint."""

from __future__ import annotations

from oar.framework.dtypes import convert_dtype
from oar.ops._infer import check_same_dtype, compatible, dtype_check, meta
from oar.registry import Attr, GradSpec, OpDef


def _four_d(x, what="X"):
    if len(x.shape) != 4:
        raise ValueError(f"{what} must be 4-D NCHW, given shape {list(x.shape)}")


def _infer_pixel_shuffle(ins, attrs):
    x = ins["X"]
    _four_d(x)
    r = attrs["upscale_factor"]
    if r < 1:
        raise ValueError(f"upscale_factor must be >= 1, given {r}")
    n, c, h, w = x.shape
    if c >= 0 and c % (r * r):
        raise ValueError(f"X's channels ({c}) must be divisible by upscale_factor^2 = {r * r}")
    return {
        "Out": meta(
            [n, c // (r * r) if c >= 0 else -1, h * r if h >= 0 else -1, w * r if w >= 0 else -1],
            x.dtype,
        )
    }


def _infer_shuffle_channel(ins, attrs):
    x = ins["X"]
    _four_d(x)
    g = attrs["group"]
    if g < 1 or (x.shape[1] >= 0 and x.shape[1] % g):
        raise ValueError(f"group {g} must be >= 1 and divide X's channels ({x.shape[1]})")
    return {"Out": x}


def _infer_crop(ins, attrs):
    x = ins["X"]
    rank = len(x.shape)
    dynamic = any(ins.get(s) for s in ("Shape", "ShapeTensor", "Offsets", "OffsetsTensor"))
    shape, offsets = list(attrs["shape"]), list(attrs["offsets"]) or [0] * rank
    if ins.get("Shape") is None and not ins.get("ShapeTensor") and len(shape) != rank:
        raise ValueError(f"shape {shape} must have one entry per dim of X {list(x.shape)}")
    if ins.get("Offsets") is None and not ins.get("OffsetsTensor") and len(offsets) != rank:
        raise ValueError(f"offsets {offsets} must have one entry per dim of X {list(x.shape)}")
    if dynamic:
        return {
            "Out": meta(
                [
                    d if d > 0 and ins.get("Shape") is None and not ins.get("ShapeTensor") else -1
                    for d in (shape or [-1] * rank)
                ],
                x.dtype,
            )
        }
    out = []
    for i, (d, s, o) in enumerate(zip(x.shape, shape, offsets)):
        if o < 0:
            raise ValueError(f"offsets must be >= 0, given {offsets}")
        s = d - o if s == -1 and d >= 0 else s
        if s == 0 or s < -1:
            raise ValueError(f"shape entries must be positive (or -1), given {shape}")
        if d >= 0 and s >= 0 and o + s > d:
            raise ValueError(
                f"crop of size {s} at offset {o} runs past dim {i} of size {d} (X {list(x.shape)})"
            )
        out.append(s)
    return {"Out": meta(out, x.dtype)}


def _infer_pad_like(ins, attrs):
    x, y = ins["X"], ins["Y"]
    check_same_dtype(ins, "X", "Y")
    if len(x.shape) != len(y.shape):
        raise ValueError(f"X {list(x.shape)} and Y {list(y.shape)} must have the same rank")
    for i, (a, b) in enumerate(zip(x.shape, y.shape)):
        if a >= 0 and b >= 0 and b > a:
            raise ValueError(f"Y's dim {i} ({b}) exceeds X's ({a}); Y is padded up to X's shape")
    return {"Out": x}


def _infer_scatter_nd_add(ins, attrs):
    x, idx, up = ins["X"], ins["Index"], ins["Updates"]
    check_same_dtype(ins, "X", "Updates")
    if idx.dtype not in ("int32", "int64"):
        raise TypeError(f"Index must be int32 or int64, given {idx.dtype}")
    k = idx.shape[-1] if idx.shape else -1
    if k < 0 or k > len(x.shape):
        raise ValueError(
            f"Index's last dim ({k}) must be known and at most X's rank {len(x.shape)}"
        )
    want = tuple(idx.shape[:-1]) + tuple(x.shape[k:])
    if len(up.shape) != len(want) or not all(compatible(a, b) for a, b in zip(up.shape, want)):
        raise ValueError(
            f"Updates shape {list(up.shape)} must be Index.shape[:-1] + X.shape[{k}:] = {list(want)}"
        )
    return {"Out": x}


def _infer_randint(ins, attrs):
    if attrs["low"] >= attrs["high"]:
        raise ValueError(f"low ({attrs['low']}) must be less than high ({attrs['high']})")
    dtype = convert_dtype(attrs["dtype"])
    if dtype not in ("int32", "int64"):
        raise TypeError(f"dtype must be int32 or int64, given {dtype}")
    if ins.get("ShapeTensor") is not None or ins.get("ShapeTensorList"):
        n = (
            len(ins["ShapeTensorList"])
            if ins.get("ShapeTensorList")
            else max(ins["ShapeTensor"].shape[0], 0)
        )
        return {"Out": meta([-1] * n, dtype)}
    if not attrs["shape"] or any(d < 1 for d in attrs["shape"]):
        raise ValueError(f"shape must be a non-empty list of positive ints, given {attrs['shape']}")
    return {"Out": meta(attrs["shape"], dtype)}


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "pixel_shuffle",
            ["X"],
            ["Out"],
            {"upscale_factor": Attr(int, 1)},
            infer_shape=_infer_pixel_shuffle,
            grad=GradSpec(("Out@GRAD",), ("X@GRAD",)),
        )
    )
    registry.register_op(
        OpDef(
            "shuffle_channel",
            ["X"],
            ["Out"],
            {"group": Attr(int, 1)},
            infer_shape=_infer_shuffle_channel,
            grad=GradSpec(("Out@GRAD",), ("X@GRAD",)),
        )
    )
    registry.register_op(
        OpDef(
            "crop_tensor",
            ["X", "Shape?", "Offsets?", "ShapeTensor*?", "OffsetsTensor*?"],
            ["Out"],
            {"shape": Attr(list, []), "offsets": Attr(list, [])},
            infer_shape=_infer_crop,
            grad=GradSpec(("X", "Offsets", "OffsetsTensor", "Out@GRAD"), ("X@GRAD",)),
        )
    )
    registry.register_op(
        OpDef(
            "pad_constant_like",
            ["X", "Y"],
            ["Out"],
            {"pad_value": Attr(float, 0.0)},
            infer_shape=_infer_pad_like,
            grad=GradSpec(("Y", "Out@GRAD"), ("Y@GRAD",)),
        )
    )
    registry.register_op(
        OpDef(
            "tril_triu",
            ["X"],
            ["Out"],
            {"diagonal": Attr(int, 0), "lower": Attr(bool)},
            infer_shape=lambda ins, a: _tri(ins),
            grad=GradSpec(("Out@GRAD",), ("X@GRAD",)),
        )
    )
    registry.register_op(
        OpDef(
            "scatter_nd_add",
            ["X", "Index", "Updates"],
            ["Out"],
            {},
            infer_shape=_infer_scatter_nd_add,
            grad=GradSpec(("X", "Index", "Updates", "Out@GRAD"), ("X@GRAD", "Updates@GRAD")),
        )
    )
    registry.register_op(
        OpDef(
            "randint",
            ["ShapeTensor?", "ShapeTensorList*?"],
            ["Out"],
            {
                "shape": Attr(list, []),
                "low": Attr(int, 0),
                "high": Attr(int),
                "seed": Attr(int, 0),
                "dtype": Attr(str, "int64", dtype_check),
            },
            infer_shape=_infer_randint,
            kernel_dtype="attr:dtype",
        )
    )


def _tri(ins):
    x = ins["X"]
    if len(x.shape) < 2:
        raise ValueError(f"X must have rank >= 2, given shape {list(x.shape)}")
    return {"Out": x}
