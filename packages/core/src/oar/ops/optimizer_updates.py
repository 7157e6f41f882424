"""Update ops of the optimizers beyond SGD/Adam (Fluid 1.8 names, slots and attrs).

Each op names the same variables for ``X`` and ``XOut`` (the optimizer passes
the parameter and its accumulators to both), so the kernels update in place.
``kernel_dtype`` is the parameter's dtype.
"""

from __future__ import annotations

from oar.registry import Attr, OpDef


def _positive(v):
    return None if v > 0 else "must be > 0"


def _unit(v):
    return None if 0 <= v <= 1 else "must be in [0, 1]"


def _nonneg(v):
    return None if v >= 0 else "must be >= 0"


_UPDATE_OPS = [
    (
        "momentum",
        ["Param", "Grad", "Velocity", "LearningRate"],
        ["ParamOut", "VelocityOut"],
        {"mu": Attr(float, 0.0), "use_nesterov": Attr(bool, False)},
    ),
    (
        "lars_momentum",
        ["Param", "Grad", "Velocity", "LearningRate"],
        ["ParamOut", "VelocityOut"],
        {
            "mu": Attr(float, 0.0),
            "lars_coeff": Attr(float, 0.001, _nonneg),
            "lars_weight_decay": Attr(float, 0.0005, _nonneg),
        },
    ),
    (
        "adagrad",
        ["Param", "Grad", "Moment", "LearningRate"],
        ["ParamOut", "MomentOut"],
        {"epsilon": Attr(float, 1e-6, _nonneg)},
    ),
    (
        "decayed_adagrad",
        ["Param", "Grad", "Moment", "LearningRate"],
        ["ParamOut", "MomentOut"],
        {"decay": Attr(float, 0.95, _unit), "epsilon": Attr(float, 1e-6, _nonneg)},
    ),
    (
        "rmsprop",
        ["Param", "MeanSquare", "MeanGrad?", "LearningRate", "Grad", "Moment"],
        ["ParamOut", "MomentOut", "MeanSquareOut", "MeanGradOut?"],
        {
            "epsilon": Attr(float, 1e-10, _nonneg),
            "decay": Attr(float, 0.9, _unit),
            "momentum": Attr(float, 0.0, _nonneg),
            "centered": Attr(bool, False),
        },
    ),
    (
        "adamax",
        ["Param", "Grad", "LearningRate", "Moment", "InfNorm", "Beta1Pow"],
        ["ParamOut", "MomentOut", "InfNormOut"],
        {
            "beta1": Attr(float, 0.9, _unit),
            "beta2": Attr(float, 0.999, _unit),
            "epsilon": Attr(float, 1e-8, _nonneg),
        },
    ),
    (
        "adadelta",
        ["Param", "Grad", "AvgSquaredGrad", "AvgSquaredUpdate"],
        ["ParamOut", "AvgSquaredGradOut", "AvgSquaredUpdateOut"],
        {"rho": Attr(float, 0.95, _unit), "epsilon": Attr(float, 1e-6, _nonneg)},
    ),
    (
        "ftrl",
        ["Param", "SquaredAccumulator", "LinearAccumulator", "Grad", "LearningRate"],
        ["ParamOut", "SquaredAccumOut", "LinearAccumOut"],
        {
            "l1": Attr(float, 0.0, _nonneg),
            "l2": Attr(float, 0.0, _nonneg),
            "lr_power": Attr(float, -0.5),
        },
    ),
    (
        "lamb",
        ["Param", "Grad", "LearningRate", "Moment1", "Moment2", "Beta1Pow", "Beta2Pow"],
        ["ParamOut", "Moment1Out", "Moment2Out"],
        {
            "weight_decay": Attr(float, 0.01),
            "beta1": Attr(float, 0.9, _unit),
            "beta2": Attr(float, 0.999, _unit),
            "epsilon": Attr(float, 1e-6, _nonneg),
        },
    ),
]


def register(registry) -> None:
    for name, ins, outs, attrs in _UPDATE_OPS:
        registry.register_op(
            OpDef(
                name,
                ins,
                outs,
                attrs,
                kernel_dtype="Param",
                doc=f"in-place parameter update of the {name} optimizer",
            )
        )
    registry.register_op(
        OpDef(
            "average_accumulates",
            [
                "param",
                "in_sum_1",
                "in_sum_2",
                "in_sum_3",
                "in_num_accumulates",
                "in_old_num_accumulates",
                "in_num_updates",
            ],
            [
                "out_sum_1",
                "out_sum_2",
                "out_sum_3",
                "out_num_accumulates",
                "out_old_num_accumulates",
                "out_num_updates",
            ],
            {
                "average_window": Attr(float, 0.0, _nonneg),
                "max_average_window": Attr(int, 2**63 - 1, _positive),
                "min_average_window": Attr(int, 10000, _positive),
            },
            kernel_dtype="param",
            doc="ModelAverage's running sums of a parameter",
        )
    )
