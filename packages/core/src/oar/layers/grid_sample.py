"""Spatial transformer layers: affine_grid and grid_sampler (Fluid 1.8 signatures)."""

from __future__ import annotations

from oar.errors import ArgumentError, ArgumentTypeError
from oar.layer_helper import LayerHelper, check_variable, is_variable

__all__ = ["affine_grid", "grid_sampler"]


def affine_grid(theta, out_shape, name=None):
    """The [N, H, W, 2] sampling grid of the affine maps ``theta`` [N, 2, 3] for an output of
    ``out_shape`` [N, C, H, W] (a list of ints or an int32 Variable)."""
    check_variable("affine_grid", "theta", theta)
    inputs = {"Theta": [theta]}
    attrs: dict = {}
    if is_variable(out_shape):
        inputs["OutputShape"] = [out_shape]
    elif isinstance(out_shape, (list, tuple)):
        if len(out_shape) != 4 or not all(
            isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in out_shape
        ):
            raise ArgumentError(
                "affine_grid",
                f"out_shape must be 4 positive ints [N, C, H, W], given {list(out_shape)}",
            )
        attrs["output_shape"] = [int(v) for v in out_shape]
    else:
        raise ArgumentTypeError(
            "affine_grid",
            f"out_shape must be a list, tuple or Variable, given {type(out_shape).__name__}",
        )
    helper = LayerHelper("affine_grid", name=name)
    out = helper.create_variable_for_type_inference(theta.dtype)
    helper.append_op("affine_grid", inputs, {"Output": [out]}, attrs)
    return out


def grid_sampler(x, grid, name=None):
    """Sample ``x`` [N, C, H, W] bilinearly at ``grid`` [N, H, W, 2] (x, y in [-1, 1]); points
    outside the image read zeros."""
    check_variable("grid_sampler", "x", x)
    check_variable("grid_sampler", "grid", grid)
    helper = LayerHelper("grid_sampler", name=name)
    out = helper.create_variable_for_type_inference(x.dtype)
    helper.append_op("grid_sampler", {"X": [x], "Grid": [grid]}, {"Output": [out]}, {})
    return out
