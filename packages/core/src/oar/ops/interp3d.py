"""Volume resizing: ``trilinear_interp`` (behind resize_trilinear / interpolate).

Slots and attrs as ``bilinear_interp`` plus ``out_d``: X, OutSize?, SizeTensor*?,
Scale? -> Out; the size comes from OutSize, SizeTensor, Scale, the ``scale``
attr, or ``out_d``/``out_h``/``out_w``, in that order.
"""

from __future__ import annotations

from oar.ops._infer import check_float, meta, one_of
from oar.registry import Attr, GradSpec, OpDef


def _infer(ins, attrs):
    x = ins["X"]
    check_float(ins, "X")
    if len(x.shape) != 5:
        raise ValueError(f"trilinear_interp: X must be 5-D, given shape {list(x.shape)}")
    last = attrs["data_layout"] == "NDHWC"
    n, c = (x.shape[0], x.shape[4]) if last else x.shape[:2]
    dhw = x.shape[1:4] if last else x.shape[2:]
    if ins.get("OutSize") is not None or ins.get("SizeTensor") or ins.get("Scale") is not None:
        out = [-1, -1, -1]
    elif attrs["scale"] > 0:
        out = [int(v * attrs["scale"]) if v >= 0 else -1 for v in dhw]
    else:
        out = [attrs["out_d"], attrs["out_h"], attrs["out_w"]]
        if min(out) <= 0:
            raise ValueError(
                f"trilinear_interp: out_d, out_h and out_w must be positive (or give scale / "
                f"OutSize), given {out}"
            )
    shape = (n, *out, c) if last else (n, c, *out)
    return {"Out": meta(shape, x.dtype)}


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "trilinear_interp",
            ["X", "OutSize?", "SizeTensor*?", "Scale?"],
            ["Out"],
            {
                "out_d": Attr(int, -1),
                "out_h": Attr(int, -1),
                "out_w": Attr(int, -1),
                "scale": Attr(float, 0.0),
                "interp_method": Attr(str, "trilinear", one_of("trilinear")),
                "align_corners": Attr(bool, True),
                "align_mode": Attr(int, 1, one_of(0, 1)),
                "data_layout": Attr(str, "NCDHW", one_of("NCDHW", "NDHWC")),
            },
            infer_shape=_infer,
            grad=GradSpec(("X", "OutSize", "SizeTensor", "Scale", "Out@GRAD"), ("X@GRAD",)),
            doc="trilinear resize of NCDHW volumes",
        )
    )
