"""3-D pooling layers: pool3d and adaptive_pool3d (Fluid 1.8 signatures and defaults)."""

from __future__ import annotations

from typing import Any

from oar.errors import ArgumentError
from oar.layer_helper import LayerHelper
from oar.layers.conv3d import paddings3d, triple, volume_input

__all__ = ["pool3d", "adaptive_pool3d"]


def pool3d_attrs(
    layer: str,
    pool_size: Any,
    pool_type: str,
    pool_stride: Any,
    pool_padding: Any,
    global_pooling: bool,
    ceil_mode: bool,
    exclusive: bool,
    data_format: str,
) -> dict:
    """The one check of ``pool3d``'s arguments (shared with ``dygraph.Pool3D``-style callers)."""
    if pool_type not in ("max", "avg"):
        raise ArgumentError(layer, f"pool_type must be 'max' or 'avg', given {pool_type!r}")
    if global_pooling:
        ksize = [1, 1, 1] if pool_size == -1 else triple(layer, "pool_size", pool_size)
    else:
        if pool_size == -1:
            raise ArgumentError(layer, "pool_size must be given unless global_pooling is True")
        ksize = triple(layer, "pool_size", pool_size)
    pads, alg = paddings3d(layer, pool_padding, data_format)
    return {
        "pooling_type": pool_type,
        "ksize": ksize,
        "global_pooling": bool(global_pooling),
        "strides": triple(layer, "pool_stride", pool_stride),
        "paddings": pads,
        "padding_algorithm": alg,
        "ceil_mode": bool(ceil_mode),
        "exclusive": bool(exclusive),
        "adaptive": False,
        "data_format": data_format,
    }


def _append(layer: str, input: Any, attrs: dict, name: Any) -> Any:
    helper = LayerHelper(layer, name=name)
    out = helper.create_variable_for_type_inference(input.dtype)
    helper.append_op("pool3d", {"X": [input]}, {"Out": [out]}, attrs)
    return out


def pool3d(
    input,
    pool_size=-1,
    pool_type="max",
    pool_stride=1,
    pool_padding=0,
    global_pooling=False,
    use_cudnn=True,
    ceil_mode=False,
    name=None,
    exclusive=True,
    data_format="NCDHW",
):
    """Max or average pooling over 3-D windows of an NCDHW (or NDHWC) volume."""
    volume_input("pool3d", input, data_format)
    attrs = pool3d_attrs(
        "pool3d",
        pool_size,
        pool_type,
        pool_stride,
        pool_padding,
        global_pooling,
        ceil_mode,
        exclusive,
        data_format,
    )
    return _append("pool3d", input, attrs, name)


def adaptive_pool3d(input, pool_size, pool_type="max", require_index=False, name=None):
    """Pooling to a fixed ``pool_size`` output: bin ``i`` spans ``[floor(i*D/OD), ceil((i+1)*D/OD))``.

    With ``require_index`` (max only) returns ``(out, mask)``, ``mask`` the flat index
    ``(d*H + h)*W + w`` of each maximum in its input volume, as Fluid's
    ``max_pool3d_with_index``.
    """
    volume_input("adaptive_pool3d", input, "NCDHW")
    if pool_type not in ("max", "avg"):
        raise ArgumentError(
            "adaptive_pool3d", f"pool_type must be 'max' or 'avg', given {pool_type!r}"
        )
    if require_index:
        if pool_type != "max":
            raise ArgumentError(
                "adaptive_pool3d",
                f"require_index=True needs pool_type='max' (as in Fluid), given {pool_type!r}",
            )
    attrs = {
        "pooling_type": pool_type,
        "ksize": triple("adaptive_pool3d", "pool_size", pool_size),
        "adaptive": True,
        "data_format": "NCDHW",
    }
    if require_index:
        return _with_index(input, attrs["ksize"], name)
    return _append("adaptive_pool3d", input, attrs, name)


def _with_index(input: Any, ksize: list, name: Any) -> tuple:
    helper = LayerHelper("adaptive_pool3d", name=name)
    out = helper.create_variable_for_type_inference(input.dtype)
    mask = helper.create_variable_for_type_inference("int32", stop_gradient=True)
    attrs = {
        "ksize": ksize,
        "adaptive": True,
        "global_pooling": False,
        "strides": [1, 1, 1],
        "paddings": [0, 0, 0],
    }
    helper.append_op("max_pool3d_with_index", {"X": [input]}, {"Out": [out], "Mask": [mask]}, attrs)
    return out, mask
