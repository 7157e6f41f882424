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
    BatchSum (init 0) and BatchSquareSum (init 1e4), parameters named ``<name>.batch_size``...

    ``param_attr`` is a dict of initial values, as in Fluid: ``batch_size``, ``batch_sum``
    and, with ``enable_scale_and_shift``, ``scale_w`` (1.0) and ``bias`` (0.0). With
    ``slot_dim > 0`` the columns are slots of ``slot_dim`` values; a slot whose first value
    is (nearly) zero is not shown in that row: its output is 0 and it adds nothing to the
    statistics, which become per-shown-row averages.
    """
    from oar.framework.param_attr import ParamAttr
    from oar.initializer import Constant

    check_variable("data_norm", "input", input)
    shape = list(input.shape)
    if len(shape) != 2 or shape[1] < 0:
        raise ShapeError.in_layer(
            "data_norm", f"input must be [N, C] with a known C, given {shape}"
        )
    c, dtype = shape[1], str(input.dtype)
    _check_slot_dim(slot_dim, c)
    init = _initial_values(param_attr)
    helper = LayerHelper("data_norm", name=name, act=act)
    base = name or "dn"

    def stat(suffix, value):
        attr = ParamAttr(name=f"{base}.{suffix}", initializer=Constant(value), trainable=True)
        return helper.create_parameter(attr, [c], dtype)

    ins = {"X": [input]}
    if enable_scale_and_shift:
        ins["scale_w"] = [stat("scale_w", init["scale_w"])]
        ins["bias"] = [stat("bias", init["bias"])]
    ins["BatchSize"] = [stat("batch_size", init["batch_size"])]
    ins["BatchSum"] = [stat("batch_sum", init["batch_sum"])]
    ins["BatchSquareSum"] = [stat("batch_square_sum", 1e4)]
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


def _check_slot_dim(slot_dim, c):
    if not isinstance(slot_dim, int) or isinstance(slot_dim, bool):
        raise ArgumentError("data_norm", f"slot_dim must be an int, given {slot_dim!r}")
    if slot_dim == 0 or slot_dim < -1:
        raise ArgumentError("data_norm", f"slot_dim must be -1 or positive, given {slot_dim}")
    if slot_dim > 0 and c % slot_dim:
        raise ShapeError.in_layer(
            "data_norm",
            f"input's C must be a multiple of slot_dim={slot_dim}, given C={c}",
        )


_DEFAULTS = {"batch_size": 1e4, "batch_sum": 0.0, "scale_w": 1.0, "bias": 0.0}


def _initial_values(param_attr):
    if param_attr is None:
        return dict(_DEFAULTS)
    if not isinstance(param_attr, dict):
        raise ArgumentError(
            "data_norm",
            "param_attr must be a dict of initial values (keys batch_size, batch_sum, "
            f"scale_w, bias), as in Fluid; given {type(param_attr).__name__}",
        )
    return {k: float(param_attr.get(k, v)) for k, v in _DEFAULTS.items()}
