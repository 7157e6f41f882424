"""im2sequence: every image becomes a sequence of its patches (one row per output position,
each row the C x kh x kw patch), e.g. for OCR models that read an image as a sequence.
With Y (each image's real [height, width]) and out_stride, each image yields only the
positions inside its real size divided by out_stride (rounded up)."""

from __future__ import annotations

from oar.ops._infer import check_float, meta
from oar.registry import Attr, GradSpec, OpDef


def _pairs(n: int, name: str):
    def check(v):
        ok = isinstance(v, (list, tuple)) and len(v) == n and all(isinstance(i, int) for i in v)
        return None if ok else f"{name} must be a list of {n} ints"

    return check


def _infer(ins, attrs):
    x = ins["X"]
    check_float(ins, "X")
    if len(x.shape) != 4:
        raise ValueError(f"X must be [N, C, H, W], given {list(x.shape)}")
    kh, kw = attrs["kernels"]
    return {"Out": meta((-1, x.shape[1] * kh * kw), x.dtype, 1)}


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "im2sequence",
            ["X", "Y?"],
            ["Out"],
            {
                "kernels": Attr(list, check=_pairs(2, "kernels")),
                "strides": Attr(list, [1, 1], _pairs(2, "strides")),
                "paddings": Attr(list, [0, 0, 0, 0], _pairs(4, "paddings")),
                "out_stride": Attr(list, [1, 1], _pairs(2, "out_stride")),
            },
            infer_shape=_infer,
            kernel_dtype="X",
            grad=GradSpec(("Out@GRAD", "X", "Y"), ("X@GRAD",)),
            doc="image patches as a sequence per image",
        )
    )
