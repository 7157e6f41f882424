"""fluid.layers.data_norm."""

from __future__ import annotations

from oar.errors import ArgumentError, ShapeError
from oar.layer_helper import LayerHelper, check_variable

__all__ = ["data_norm"]


def data_norm(
    input,
    act=None,
    epsilon=1e-05,
    param_attr=None,
    data_layout="NCHW",
    in_place=False,
    name=None,
    moving_mean_name=None,
    moving_variance_name=None,
    do_model_average_for_mean_and_var=True,
    slot_dim=-1,
    sync_stats=False,
    summary_decay_rate=0.9999999,
    enable_scale_and_shift=False,
):
    """Normalise each column of ``input`` [N, C] by the running summaries BatchSize (init 1e4),
    BatchSum (init 0) and BatchSquareSum (init 1e4), parameters named ``<name>.batch_size``..."""
    from oar.framework.param_attr import ParamAttr
    from oar.initializer import Constant

    check_variable("data_norm", "input", input)
    shape = list(input.shape)
    if len(shape) != 2 or shape[1] < 0:
        raise ShapeError.in_layer(
            "data_norm", f"input must be [N, C] with a known C, given {shape}"
        )
    if slot_dim != -1:
        raise ArgumentError(
            "data_norm", f"slot_dim={slot_dim} (per-slot statistics) is not provided by oar yet"
        )
    c, dtype = shape[1], str(input.dtype)
    helper = LayerHelper("data_norm", name=name, act=act)
    base = name or "dn"

    def stat(suffix, value):
        attr = ParamAttr(name=f"{base}.{suffix}", initializer=Constant(value), trainable=True)
        return helper.create_parameter(attr, [c], dtype)

    ins = {
        "X": [input],
        "BatchSize": [stat("batch_size", 1e4)],
        "BatchSum": [stat("batch_sum", 0.0)],
        "BatchSquareSum": [stat("batch_square_sum", 1e4)],
    }
    if enable_scale_and_shift:
        ins["scale_w"] = [
            helper.create_parameter(param_attr or ParamAttr(initializer=Constant(1.0)), [c], dtype)
        ]
        ins["bias"] = [helper.create_parameter(None, [c], dtype, is_bias=True)]
    y = helper.create_variable_for_type_inference(dtype)
    means = helper.create_variable_for_type_inference(dtype, stop_gradient=True)
    scales = helper.create_variable_for_type_inference(dtype, stop_gradient=True)
    helper.append_op(
        "data_norm",
        ins,
        {"Y": [y], "Means": [means], "Scales": [scales]},
        {
            "epsilon": float(epsilon),
            "slot_dim": slot_dim,
            "data_layout": data_layout,
            "summary_decay_rate": float(summary_decay_rate),
            "sync_stats": bool(sync_stats),
            "enable_scale_and_shift": bool(enable_scale_and_shift),
        },
    )
    return helper.append_activation(y, act)
