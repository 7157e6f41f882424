"""2-D pooling: ``pool2d`` (max/avg, global, ceil_mode, exclusive, adaptive) and ``max_pool2d_with_index``.

Fluid's conventions: ``ksize``/``strides``/``paddings`` attrs; with ``global_pooling``
the window is the whole image; with ``adaptive`` ``ksize`` is the output size and
window ``i`` spans ``[floor(i*H/OH), ceil((i+1)*H/OH))``; non-exclusive average
divides by ``kh*kw`` even where the window hangs over the border.
"""

from __future__ import annotations

from oar.ops._infer import check_float, ints_check, meta, one_of, paddings_check
from oar.ops.conv import resolve_paddings
from oar.registry import REQUIRED, Attr, GradSpec, OpDef


def pool_geometry(hw, attrs) -> tuple:
    """``(ksize, strides, (top, bottom, left, right), out_hw)`` of a pool over an ``hw`` image."""
    if attrs.get("global_pooling"):
        return tuple(hw), (1, 1), (0, 0, 0, 0), (1, 1)
    ksize = tuple(attrs["ksize"])
    if attrs.get("adaptive"):
        return ksize, (1, 1), (0, 0, 0, 0), ksize
    s = tuple(attrs["strides"])
    pads, _ = resolve_paddings(
        attrs["paddings"], attrs.get("padding_algorithm", "EXPLICIT"), hw, ksize, s, (1, 1)
    )
    out = []
    for size, k, st, (b, a) in zip(hw, ksize, s, (pads[:2], pads[2:])):
        if size < 0:
            out.append(-1)
        elif attrs.get("ceil_mode"):
            out.append((size + b + a - k + st - 1) // st + 1)
        else:
            out.append((size + b + a - k) // st + 1)
    return ksize, s, pads, tuple(out)


def _infer_pool(op_type):
    def infer(ins, attrs):
        x = ins["X"]
        check_float(ins, "X")
        if len(x.shape) != 4:
            raise ValueError(f"{op_type}: X must be 4-D, given shape {list(x.shape)}")
        nhwc = attrs.get("data_format") == "NHWC"
        n, c, h, w = (x.shape[0], x.shape[3], x.shape[1], x.shape[2]) if nhwc else x.shape
        if not attrs["global_pooling"]:
            k = attrs["ksize"]
            if any(i <= 0 for i in k):
                raise ValueError(
                    f"{op_type}: ksize must be positive unless global_pooling, given {list(k)}"
                )
            if any(i <= 0 for i in attrs["strides"]):
                raise ValueError(
                    f"{op_type}: strides must be positive, given {list(attrs['strides'])}"
                )
        _, _, pads, (oh, ow) = pool_geometry((h, w), attrs)
        if (h >= 0 and oh <= 0) or (w >= 0 and ow <= 0):
            raise ValueError(
                f"{op_type}: pool window {list(attrs['ksize'])} is larger than the padded input "
                f"{[h, w]} (paddings {list(pads)}, X shape {list(x.shape)}): output would be {[oh, ow]}"
            )
        out = (n, oh, ow, c) if nhwc else (n, c, oh, ow)
        res = {"Out": meta(out, x.dtype)}
        if op_type == "max_pool2d_with_index":
            res["Mask"] = meta(out, "int32")
        return res

    return infer


def register(registry) -> None:
    common = {
        "ksize": Attr(list, REQUIRED, ints_check(2)),
        "global_pooling": Attr(bool, False),
        "strides": Attr(list, [1, 1], ints_check(2)),
        "paddings": Attr(list, [0, 0], paddings_check(2)),
        "adaptive": Attr(bool, False),
    }
    registry.register_op(
        OpDef(
            "pool2d",
            ["X"],
            ["Out"],
            dict(
                common,
                pooling_type=Attr(str, "max", one_of("max", "avg")),
                exclusive=Attr(bool, True),
                ceil_mode=Attr(bool, False),
                padding_algorithm=Attr(str, "EXPLICIT", one_of("EXPLICIT", "SAME", "VALID")),
                data_format=Attr(str, "NCHW", one_of("NCHW", "NHWC", "AnyLayout")),
                use_quantizer=Attr(bool, False),
                is_test=Attr(bool, False),
            ),
            infer_shape=_infer_pool("pool2d"),
            grad=GradSpec(("X", "Out", "Out@GRAD"), ("X@GRAD",)),
            doc="max or average pooling over 2-D windows",
        )
    )
    registry.register_op(
        OpDef(
            "max_pool2d_with_index",
            ["X"],
            ["Out", "Mask"],
            common,
            infer_shape=_infer_pool("max_pool2d_with_index"),
            grad=GradSpec(("X", "Mask", "Out@GRAD"), ("X@GRAD",)),
            doc="max pooling that also returns each maximum's flat index h*W+w in its input plane",
        )
    )
