"""continuous_value_model, random_crop, spectral_norm and inplace_abn layers."""

from __future__ import annotations

from typing import Any

from oar.errors import ArgumentError, ShapeError
from oar.layer_helper import LayerHelper, check_variable

__all__ = ["continuous_value_model", "random_crop", "spectral_norm", "inplace_abn"]


def continuous_value_model(input, cvm, use_cvm=True):
    """CTR features: with ``use_cvm`` the show/click columns become log(show + 1) and
    log(click + 1) - log(show + 1); without, they are dropped."""
    check_variable("continuous_value_model", "input", input)
    check_variable("continuous_value_model", "cvm", cvm)
    helper = LayerHelper("cvm")
    out = helper.create_variable_for_type_inference(input.dtype)
    helper.append_op("cvm", {"X": [input], "CVM": [cvm]}, {"Y": [out]}, {"use_cvm": bool(use_cvm)})
    return out


def random_crop(x, shape, seed=None):
    """A random box of ``shape`` (the trailing dims) from each instance of ``x``."""
    check_variable("random_crop", "x", x)
    if (
        not isinstance(shape, (list, tuple))
        or not shape
        or not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in shape)
    ):
        raise ArgumentError(
            "random_crop", f"shape must be a list of positive ints, given {shape!r}"
        )
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise ArgumentError("random_crop", f"seed must be an int (or None), given {seed!r}")
    helper = LayerHelper("random_crop")
    out = helper.create_variable_for_type_inference(x.dtype)
    seed_out = helper.create_variable_for_type_inference("int64", stop_gradient=True)
    helper.append_op(
        "random_crop",
        {"X": [x]},
        {"Out": [out], "SeedOut": [seed_out]},
        {"shape": list(shape), "startup_seed": int(seed or 0)},
    )
    return out


def spectral_norm(weight, dim=0, power_iters=1, eps=1e-12, name=None):
    """``weight / sigma``, sigma its largest singular value (``weight`` seen as a matrix with
    ``dim`` first) estimated by ``power_iters`` power iterations on persistable U, V."""
    from oar.framework.param_attr import ParamAttr
    from oar.initializer import Normal

    check_variable("spectral_norm", "weight", weight)
    shape = list(weight.shape)
    if len(shape) < 2 or any(d < 0 for d in shape):
        raise ShapeError.in_layer(
            "spectral_norm", f"weight must have >= 2 known dims, given {shape}"
        )
    if isinstance(dim, bool) or not isinstance(dim, int) or not 0 <= dim < len(shape):
        raise ArgumentError("spectral_norm", f"dim must be in [0, {len(shape)}), given {dim!r}")
    if isinstance(power_iters, bool) or not isinstance(power_iters, int) or power_iters < 0:
        raise ArgumentError(
            "spectral_norm", f"power_iters must be an int >= 0, given {power_iters!r}"
        )
    h = shape[dim]
    w = 1
    for i, d in enumerate(shape):
        if i != dim:
            w *= d
    helper = LayerHelper("spectral_norm", name=name)
    dtype = str(weight.dtype)
    u = helper.create_parameter(
        ParamAttr(trainable=False), [h], dtype, default_initializer=Normal(0.0, 1.0)
    )
    v = helper.create_parameter(
        ParamAttr(trainable=False), [w], dtype, default_initializer=Normal(0.0, 1.0)
    )
    out = helper.create_variable_for_type_inference(dtype)
    helper.append_op(
        "spectral_norm",
        {"Weight": [weight], "U": [u], "V": [v]},
        {"Out": [out]},
        {"dim": dim, "power_iters": power_iters, "eps": float(eps)},
    )
    return out


def inplace_abn(
    input,
    act=None,
    is_test=False,
    momentum=0.9,
    epsilon=1e-05,
    param_attr=None,
    bias_attr=None,
    data_layout="NCHW",
    name=None,
    moving_mean_name=None,
    moving_variance_name=None,
    do_model_average_for_mean_and_var=True,
    use_global_stats=False,
    act_alpha=1.0,
) -> Any:
    """Batch norm fused with an activation ('identity', 'leaky_relu' (slope ``act_alpha``) or
    'elu'), as Fluid's in-place activated batch norm computes it (oar keeps separate buffers)."""
    from oar.layers.activation import elu, leaky_relu
    from oar.layers.norm import batch_norm

    if act not in (None, "identity", "leaky_relu", "elu"):
        raise ArgumentError(
            "inplace_abn", f"act must be None, 'identity', 'leaky_relu' or 'elu', given {act!r}"
        )
    y = batch_norm(
        input,
        None,
        is_test,
        momentum,
        epsilon,
        param_attr,
        bias_attr,
        data_layout,
        False,
        name,
        moving_mean_name,
        moving_variance_name,
        do_model_average_for_mean_and_var,
        use_global_stats,
    )
    if act == "leaky_relu":
        return leaky_relu(y, alpha=act_alpha)
    if act == "elu":
        return elu(y, alpha=act_alpha)
    return y
