"""Pooling layers: pool2d and adaptive_pool2d (Fluid 1.5-1.8 signatures and defaults)."""

from __future__ import annotations

from typing import Any

from oar.errors import ArgumentError
from oar.layer_helper import LayerHelper
from oar.layers._conv_args import check_bool, image_input, paddings, pair

__all__ = ["pool2d", "adaptive_pool2d"]


def _pool_type(layer: str, pool_type: Any) -> str:
    if pool_type not in ("max", "avg"):
        raise ArgumentError(layer, f"pool_type must be 'max' or 'avg', given {pool_type!r}")
    return pool_type


def pool2d(
    input: Any,
    pool_size: Any = -1,
    pool_type: str = "max",
    pool_stride: Any = 1,
    pool_padding: Any = 0,
    global_pooling: bool = False,
    use_cudnn: bool = True,
    ceil_mode: bool = False,
    name: str | None = None,
    exclusive: bool = True,
    data_format: str = "NCHW",
) -> Any:
    """Max or average pooling over ``pool_size`` windows (or the whole image with ``global_pooling``).

    ``exclusive`` averages over the real pixels of a window only; ``ceil_mode``
    rounds the output size up so a partial last window is kept.
    """
    helper = LayerHelper("pool2d", name=name)
    image_input("pool2d", "input", input, data_format)
    _pool_type("pool2d", pool_type)
    check_bool("pool2d", "global_pooling", global_pooling)
    check_bool("pool2d", "use_cudnn", use_cudnn)
    check_bool("pool2d", "ceil_mode", ceil_mode)
    check_bool("pool2d", "exclusive", exclusive)
    if global_pooling:
        ksize = [-1, -1] if pool_size == -1 else pair("pool2d", "pool_size", pool_size)
    else:
        if pool_size == -1:
            raise ArgumentError(
                "pool2d",
                "pool_size must be given (a positive int or 2 ints) unless global_pooling=True",
            )
        ksize = pair("pool2d", "pool_size", pool_size)
    strides = pair("pool2d", "pool_stride", pool_stride)
    pads, alg = paddings("pool2d", pool_padding, data_format)
    if alg == "VALID" and ceil_mode:
        raise ArgumentError(
            "pool2d", "when pool_padding is 'VALID', ceil_mode must be False, given ceil_mode=True"
        )
    out = helper.create_variable_for_type_inference(input.dtype)
    helper.append_op(
        "pool2d",
        {"X": [input]},
        {"Out": [out]},
        {
            "pooling_type": pool_type,
            "ksize": ksize,
            "global_pooling": global_pooling,
            "strides": strides,
            "paddings": pads,
            "padding_algorithm": alg,
            "use_cudnn": use_cudnn,
            "ceil_mode": ceil_mode,
            "use_mkldnn": False,
            "exclusive": exclusive,
            "data_format": data_format,
        },
    )
    return out


def adaptive_pool2d(
    input: Any,
    pool_size: Any,
    pool_type: str = "max",
    require_index: bool = False,
    name: str | None = None,
) -> Any:
    """Pool to a fixed ``pool_size`` output whatever the input size.

    With ``require_index`` (max only) also returns the flat index of each
    maximum in its input plane, as Fluid's ``max_pool2d_with_index`` does.
    """
    helper = LayerHelper("adaptive_pool2d", name=name)
    image_input("adaptive_pool2d", "input", input, "NCHW")
    _pool_type("adaptive_pool2d", pool_type)
    check_bool("adaptive_pool2d", "require_index", require_index)
    if pool_type == "avg" and require_index:
        raise ArgumentError(
            "adaptive_pool2d", "require_index=True is only supported for pool_type='max'"
        )
    ksize = pair("adaptive_pool2d", "pool_size", pool_size)
    out = helper.create_variable_for_type_inference(input.dtype)
    attrs = {
        "ksize": ksize,
        "adaptive": True,
        "global_pooling": False,
        "strides": [1, 1],
        "paddings": [0, 0],
    }
    if require_index:
        mask = helper.create_variable_for_type_inference("int32", stop_gradient=True)
        helper.append_op(
            "max_pool2d_with_index", {"X": [input]}, {"Out": [out], "Mask": [mask]}, attrs
        )
        return out, mask
    helper.append_op(
        "pool2d",
        {"X": [input]},
        {"Out": [out]},
        dict(
            attrs,
            pooling_type=pool_type,
            use_cudnn=False,
            ceil_mode=False,
            exclusive=True,
            padding_algorithm="EXPLICIT",
        ),
    )
    return out
