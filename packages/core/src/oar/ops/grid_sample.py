"""Spatial transformer ops: ``affine_grid`` (Theta [N, 2, 3] -> sampling grid [N, H, W, 2])
and ``grid_sampler`` (bilinear sampling of X [N, C, H, W] at Grid [N, H, W, 2], zeros outside).

Grid coordinates are normalised to [-1, 1] with the corners at the outermost pixel
centres (Fluid 1.8's only mode; PyTorch's ``align_corners=True``).
"""

from __future__ import annotations

from oar.ops._infer import check_float, compatible, meta
from oar.registry import Attr, GradSpec, OpDef


def _infer_affine_grid(ins, attrs):
    t = ins["Theta"]
    check_float(ins, "Theta")
    if len(t.shape) != 3 or t.shape[1:] != (2, 3):
        raise ValueError(f"affine_grid: Theta must be [N, 2, 3], given {list(t.shape)}")
    if ins.get("OutputShape") is not None:
        return {"Output": meta((t.shape[0], -1, -1, 2), t.dtype)}
    shape = attrs["output_shape"]
    if len(shape) != 4 or min(shape) <= 0:
        raise ValueError(
            f"affine_grid: output_shape must be 4 positive ints [N, C, H, W], given {shape}"
        )
    return {"Output": meta((t.shape[0], shape[2], shape[3], 2), t.dtype)}


def _infer_grid_sampler(ins, attrs):
    x, g = ins["X"], ins["Grid"]
    check_float(ins, "X")
    if len(x.shape) != 4 or len(g.shape) != 4 or g.shape[3] != 2:
        raise ValueError(
            f"grid_sampler: X must be [N, C, H, W] and Grid [N, H, W, 2], given {list(x.shape)} "
            f"and {list(g.shape)}"
        )
    if not all(
        compatible(a, b)
        for a, b in ((x.shape[0], g.shape[0]), (x.shape[2], g.shape[1]), (x.shape[3], g.shape[2]))
    ):
        raise ValueError(
            f"grid_sampler: Grid {list(g.shape)} must match X {list(x.shape)} in N, H and W (as in Fluid)"
        )
    return {"Output": meta((x.shape[0], x.shape[1], g.shape[1], g.shape[2]), x.dtype)}


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "affine_grid",
            ["Theta", "OutputShape?"],
            ["Output"],
            {"output_shape": Attr(list, []), "use_cudnn": Attr(bool, True)},
            infer_shape=_infer_affine_grid,
            grad=GradSpec(("Theta", "OutputShape", "Output@GRAD"), ("Theta@GRAD",)),
        )
    )
    registry.register_op(
        OpDef(
            "grid_sampler",
            ["X", "Grid"],
            ["Output"],
            {"use_cudnn": Attr(bool, True)},
            infer_shape=_infer_grid_sampler,
            grad=GradSpec(("X", "Grid", "Output@GRAD"), ("X@GRAD", "Grid@GRAD")),
        )
    )
