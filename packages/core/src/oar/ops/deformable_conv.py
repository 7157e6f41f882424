"""deformable_conv (modulated, DCNv2) and deformable_conv_v1: a convolution whose kernel taps
sample the input at learned fractional offsets (bilinearly; v2 also scales each tap by a
learned mask). Gradients for Input, Offset, Mask and Filter."""

from __future__ import annotations

from oar.ops._infer import check_float
from oar.registry import Attr, GradSpec, OpDef, VarMeta


def out_size(size: int, k: int, stride: int, pad: int, dil: int) -> int:
    return (size + 2 * pad - (dil * (k - 1) + 1)) // stride + 1 if size >= 0 else -1


def _pair(name):
    return lambda v: (
        None if len(v) == 2 and all(isinstance(i, int) for i in v) else f"must be 2 ints ({name})"
    )


def _infer(ins, attrs):
    x, off, w = ins["Input"], ins["Offset"], ins["Filter"]
    check_float(ins, "Input")
    if len(x.shape) != 4 or len(w.shape) != 4 or len(off.shape) != 4:
        raise ValueError(
            f"Input, Offset and Filter must be 4-D, given {list(x.shape)}, {list(off.shape)} and {list(w.shape)}"
        )
    n, c, h, wd = x.shape
    f, cg, kh, kw = w.shape
    g, dg = attrs["groups"], attrs["deformable_groups"]
    if c >= 0 and (c % g or cg * g != c):
        raise ValueError(
            f"Filter [F, C / groups, kh, kw] needs C / groups = {c} / {g}, given {list(w.shape)}"
        )
    if c >= 0 and c % dg:
        raise ValueError(f"the {c} input channels must split into deformable_groups = {dg}")
    if f % g:
        raise ValueError(f"the {f} filters must split into groups = {g}")
    ho = out_size(h, kh, attrs["strides"][0], attrs["paddings"][0], attrs["dilations"][0])
    wo = out_size(wd, kw, attrs["strides"][1], attrs["paddings"][1], attrs["dilations"][1])
    want = [n, 2 * dg * kh * kw, ho, wo]
    if any(a >= 0 and b >= 0 and a != b for a, b in zip(off.shape, want)):
        raise ValueError(
            f"Offset must be [N, 2 * deformable_groups * kh * kw, Ho, Wo] = {want}, given {list(off.shape)}"
        )
    m = ins.get("Mask")
    if m is not None:
        want_m = [n, dg * kh * kw, ho, wo]
        if any(a >= 0 and b >= 0 and a != b for a, b in zip(m.shape, want_m)):
            raise ValueError(
                f"Mask must be [N, deformable_groups * kh * kw, Ho, Wo] = {want_m}, given {list(m.shape)}"
            )
    return {"Output": VarMeta((n, f, ho, wo), x.dtype)}


def _attrs() -> dict:
    return {
        "strides": Attr(list, [1, 1], _pair("strides")),
        "paddings": Attr(list, [0, 0], _pair("paddings")),
        "dilations": Attr(list, [1, 1], _pair("dilations")),
        "groups": Attr(int, 1, lambda v: None if v > 0 else "must be positive"),
        "deformable_groups": Attr(int, 1, lambda v: None if v > 0 else "must be positive"),
        "im2col_step": Attr(int, 64),
    }


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "deformable_conv",
            ["Input", "Offset", "Mask", "Filter"],
            ["Output"],
            _attrs(),
            infer_shape=_infer,
            grad=GradSpec(
                ("Input", "Offset", "Mask", "Filter", "Output@GRAD"),
                ("Input@GRAD", "Offset@GRAD", "Mask@GRAD", "Filter@GRAD"),
            ),
            doc="modulated deformable convolution (DCNv2)",
        )
    )
    registry.register_op(
        OpDef(
            "deformable_conv_v1",
            ["Input", "Offset", "Filter"],
            ["Output"],
            _attrs(),
            infer_shape=_infer,
            grad=GradSpec(
                ("Input", "Offset", "Filter", "Output@GRAD"),
                ("Input@GRAD", "Offset@GRAD", "Filter@GRAD"),
            ),
            doc="deformable convolution (DCNv1)",
        )
    )
