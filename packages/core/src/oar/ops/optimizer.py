"""Parameter-update ops appended by optimizers: sgd, adam.

Outputs name the same variables as the inputs (``ParamOut`` is ``Param``), so
kernels update the arrays in place and allocate nothing per step.
"""

from __future__ import annotations

from oar.registry import Attr, OpDef


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "sgd",
            ["Param", "LearningRate", "Grad"],
            ["ParamOut"],
            {},
            kernel_dtype="Param",
        )
    )
    registry.register_op(
        OpDef(
            "adam",
            [
                "Param",
                "Grad",
                "LearningRate",
                "Moment1",
                "Moment2",
                "Beta1Pow",
                "Beta2Pow",
                "Beta1Tensor?",
                "Beta2Tensor?",
            ],
            ["ParamOut", "Moment1Out", "Moment2Out", "Beta1PowOut", "Beta2PowOut"],
            {
                "beta1": Attr(float, 0.9),
                "beta2": Attr(float, 0.999),
                "epsilon": Attr(float, 1e-8),
                "lazy_mode": Attr(bool, False),
                "min_row_size_to_use_multithread": Attr(int, 1000),
            },
            kernel_dtype="Param",
        )
    )
