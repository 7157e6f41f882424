"""3-D pooling: ``pool3d`` (max/avg, global, ceil_mode, exclusive, adaptive; NCDHW or NDHWC)
and ``max_pool3d_with_index`` (NCDHW; also each maximum's flat index ``(d*H + h)*W + w``).

Conventions as ``pool2d``: with ``adaptive`` ``ksize`` is the output size and
window ``i`` spans ``[floor(i*D/OD), ceil((i+1)*D/OD))``; non-exclusive average
divides by the full window volume even where it hangs over the border.
"""

from __future__ import annotations

from oar.ops._infer import check_float, ints_check, meta, one_of, paddings_check
from oar.ops.conv3d import resolve_paddings_nd
from oar.registry import REQUIRED, Attr, GradSpec, OpDef


def pool3d_geometry(dhw, attrs) -> tuple:
    """``(ksize, strides, pads6, out_dhw)`` of a pool over a ``dhw`` volume."""
    if attrs.get("global_pooling"):
        return tuple(dhw), (1, 1, 1), (0,) * 6, (1, 1, 1)
    ksize = tuple(attrs["ksize"])
    if attrs.get("adaptive"):
        return ksize, (1, 1, 1), (0,) * 6, ksize
    s = tuple(attrs["strides"])
    pads, _ = resolve_paddings_nd(
        attrs["paddings"], attrs.get("padding_algorithm", "EXPLICIT"), dhw, ksize, s, (1, 1, 1)
    )
    out = []
    for i, (size, k, st) in enumerate(zip(dhw, ksize, s)):
        b, a = pads[2 * i], pads[2 * i + 1]
        if size < 0:
            out.append(-1)
        elif attrs.get("ceil_mode"):
            out.append((size + b + a - k + st - 1) // st + 1)
        else:
            out.append((size + b + a - k) // st + 1)
    return ksize, s, pads, tuple(out)


def _infer_pool3d(ins, attrs):
    x = ins["X"]
    check_float(ins, "X")
    if len(x.shape) != 5:
        raise ValueError(f"pool3d: X must be 5-D, given shape {list(x.shape)}")
    ndhwc = attrs["data_format"] == "NDHWC"
    n, c = (x.shape[0], x.shape[4]) if ndhwc else x.shape[:2]
    dhw = tuple(x.shape[1:4]) if ndhwc else tuple(x.shape[2:])
    if not attrs["global_pooling"]:
        if any(i <= 0 for i in attrs["ksize"]):
            raise ValueError(f"pool3d: ksize must be positive, given {list(attrs['ksize'])}")
        if any(i <= 0 for i in attrs["strides"]):
            raise ValueError(f"pool3d: strides must be positive, given {list(attrs['strides'])}")
    _, _, pads, out = pool3d_geometry(dhw, attrs)
    if any(s >= 0 and o <= 0 for s, o in zip(dhw, out)):
        raise ValueError(
            f"pool3d: pool window {list(attrs['ksize'])} is larger than the padded input {list(dhw)} "
            f"(paddings {list(pads)}): output would be {list(out)}"
        )
    shape = (n, *out, c) if ndhwc else (n, c, *out)
    return {"Out": meta(shape, x.dtype)}


def _infer_with_index(ins, attrs):
    out = _infer_pool3d(ins, dict(attrs, data_format="NCDHW"))["Out"]
    return {"Out": out, "Mask": meta(out.shape, "int32")}


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "pool3d",
            ["X"],
            ["Out"],
            {
                "pooling_type": Attr(str, "max", one_of("max", "avg")),
                "ksize": Attr(list, REQUIRED, ints_check(3)),
                "global_pooling": Attr(bool, False),
                "strides": Attr(list, [1, 1, 1], ints_check(3)),
                "paddings": Attr(list, [0, 0, 0], paddings_check(3)),
                "exclusive": Attr(bool, True),
                "adaptive": Attr(bool, False),
                "ceil_mode": Attr(bool, False),
                "padding_algorithm": Attr(str, "EXPLICIT", one_of("EXPLICIT", "SAME", "VALID")),
                "data_format": Attr(str, "NCDHW", one_of("NCDHW", "NDHWC", "AnyLayout")),
                "use_cudnn": Attr(bool, True),
            },
            infer_shape=_infer_pool3d,
            grad=GradSpec(("X", "Out", "Out@GRAD"), ("X@GRAD",)),
            doc="max or average pooling over 3-D windows",
        )
    )
    registry.register_op(
        OpDef(
            "max_pool3d_with_index",
            ["X"],
            ["Out", "Mask"],
            {
                "ksize": Attr(list, REQUIRED, ints_check(3)),
                "global_pooling": Attr(bool, False),
                "strides": Attr(list, [1, 1, 1], ints_check(3)),
                "paddings": Attr(list, [0, 0, 0], paddings_check(3)),
                "adaptive": Attr(bool, False),
            },
            infer_shape=_infer_with_index,
            grad=GradSpec(("X", "Mask", "Out@GRAD"), ("X@GRAD",)),
            doc="max pooling over 3-D windows that also returns each maximum's flat index",
        )
    )
