"""ONNX converters for image ops: lrn, bilinear/nearest interpolation (Resize)."""

from __future__ import annotations

from typing import Any

import numpy as np

from oar_deploy.onnx.export import Graph, converter


@converter("lrn")
def _lrn(g: Graph, op: Any) -> None:
    if op.attr("data_format") not in ("NCHW", "AnyLayout", None):
        g.fail("data_format NHWC is not exported")
    n = int(op.attr("n"))
    # Fluid: x / (k + alpha * sum(x^2))^beta; ONNX divides alpha by the window size
    g.node(
        "LRN",
        [g.x("X")],
        g.y("Out"),
        size=n,
        alpha=float(op.attr("alpha")) * n,
        beta=float(op.attr("beta")),
        bias=float(op.attr("k")),
    )


def _transform_mode(op: Any) -> dict:
    align = bool(op.attr("align_corners"))
    if op.type == "nearest_interp":
        if align:
            return {
                "coordinate_transformation_mode": "align_corners",
                "nearest_mode": "round_prefer_ceil",
            }
        return {"coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"}
    if align:
        return {"coordinate_transformation_mode": "align_corners"}
    mode = "half_pixel" if op.attr("align_mode") == 0 else "asymmetric"
    return {"coordinate_transformation_mode": mode}


@converter("bilinear_interp", "nearest_interp")
def _interp(g: Graph, op: Any) -> None:
    for slot in ("OutSize", "SizeTensor", "Scale"):
        if op.input(slot):
            g.fail(f"the {slot} input (a size given at run time) is not exported; use the attr")
    if op.attr("data_layout") not in ("NCHW", "AnyLayout", None):
        g.fail("data_layout NHWC is not exported")
    oh, ow = int(op.attr("out_h")), int(op.attr("out_w"))
    x = g.x("X")
    kw = _transform_mode(op)
    kw["mode"] = "linear" if op.type == "bilinear_interp" else "nearest"
    if oh > 0 and ow > 0:
        shape = g.node("Shape", [x])
        nc = g.node(
            "Slice",
            [
                shape,
                g.const([0], np.int64, "s"),
                g.const([2], np.int64, "e"),
                g.const([0], np.int64, "a"),
            ],
        )
        sizes = g.node("Concat", [nc, g.const([oh, ow], np.int64, "hw")], axis=0)
        g.node("Resize", [x, "", "", sizes], g.y("Out"), **kw)
        return
    scale = float(op.attr("scale") or 0)
    if scale <= 0:
        g.fail("neither out_h/out_w nor scale is set")
    scales = g.const([1.0, 1.0, scale, scale], np.float32, "scales")
    g.node("Resize", [x, "", scales], g.y("Out"), **kw)
