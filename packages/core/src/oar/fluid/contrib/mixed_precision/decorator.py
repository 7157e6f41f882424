"""``decorate(optimizer)``: training with a (dynamically) scaled loss, Fluid 1.8's AMP API.

``minimize`` first rewrites the forward program for float16 compute
(``fp16_utils.rewrite_program``: white-list ops, and gray-list ops fed float16, compute
in float16 between casts, as ``amp_lists`` says), multiplies the loss by the
loss-scaling variable, appends the
backward pass, then ``check_finite_and_unscale`` (gradients divided by the
scale; all zero and ``FoundInfinite`` set when any overflowed) and, with
``use_dynamic_loss_scaling``, ``update_loss_scaling`` (grow the scale after
``incr_every_n_steps`` finite steps, shrink it after ``decr_every_n_nan_or_inf``
overflows), before the wrapped optimizer's update ops. Parameters stay float32
(the master weights; their float16 copies are casts). Static graphs only, as in
Fluid 1.8.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from oar.fluid.contrib.mixed_precision.fp16_lists import AutoMixedPrecisionLists
from oar.fluid.contrib.mixed_precision.fp16_utils import rewrite_program

__all__ = ["decorate", "OptimizerWithMixedPrecision"]


class OptimizerWithMixedPrecision:
    def __init__(
        self,
        optimizer: Any,
        amp_lists: AutoMixedPrecisionLists,
        init_loss_scaling: float,
        use_dynamic_loss_scaling: bool,
        incr_every_n_steps: int,
        decr_every_n_nan_or_inf: int,
        incr_ratio: float,
        decr_ratio: float,
    ) -> None:
        if init_loss_scaling <= 0:
            raise ValueError(f"decorate: init_loss_scaling must be > 0, given {init_loss_scaling}")
        if incr_ratio <= 1.0 or not 0.0 < decr_ratio < 1.0:
            raise ValueError(
                f"decorate: incr_ratio must be > 1 and decr_ratio in (0, 1), given "
                f"{incr_ratio} and {decr_ratio}"
            )
        self._optimizer = optimizer
        self._amp_lists = amp_lists
        self._init_loss_scaling = float(init_loss_scaling)
        self._use_dynamic_loss_scaling = use_dynamic_loss_scaling
        self._incr_every_n_steps = int(incr_every_n_steps)
        self._decr_every_n_nan_or_inf = int(decr_every_n_nan_or_inf)
        self._incr_ratio = float(incr_ratio)
        self._decr_ratio = float(decr_ratio)
        self._loss_scaling: Any = None
        self._scaled_loss: Any = None
        self._found_inf: Any = None

    def get_loss_scaling(self) -> Any:
        """The loss-scaling variable (fetch it to watch the scale)."""
        return self._loss_scaling

    def get_scaled_loss(self) -> Any:
        return self._scaled_loss

    def _state_vars(self) -> None:
        from oar import layers
        from oar.framework import unique_name

        def var(key: str, value: float, dtype: str) -> Any:
            v = layers.create_global_var(
                [1], value, dtype, persistable=True, name=unique_name.generate(key)
            )
            v.stop_gradient = True
            return v

        self._loss_scaling = var("loss_scaling", self._init_loss_scaling, "float32")
        self._good_steps = var("num_good_steps", 0, "int32")
        self._bad_steps = var("num_bad_steps", 0, "int32")

    def backward(
        self,
        loss: Any,
        startup_program: Any = None,
        parameter_list: Sequence | None = None,
        no_grad_set: Any = None,
        callbacks: Any = None,
    ) -> list:
        """Scale the loss and append its backward pass; returns the (scaled) params_grads."""
        from oar import layers
        from oar.framework.program import program_guard

        program = loss.block.program
        startup = startup_program
        if startup is None:
            from oar.framework.program import default_startup_program

            startup = default_startup_program()
        with program_guard(program, startup):
            rewrite_program(program, self._amp_lists)
            self._state_vars()
            self._scaled_loss = layers.elementwise_mul(loss, self._loss_scaling)
        return self._optimizer.backward(
            self._scaled_loss, startup_program, parameter_list, no_grad_set, callbacks
        )

    def apply_gradients(self, params_grads: list) -> list:
        """Unscale (zeroing on overflow), update the scale, then the optimizer's updates."""
        from oar.layer_helper import LayerHelper

        grads = [g for _, g in params_grads if g is not None]
        helper = LayerHelper("check_finite_and_unscale")
        self._found_inf = helper.create_variable_for_type_inference("bool")
        self._found_inf.stop_gradient = True
        helper.append_op(
            "check_finite_and_unscale",
            {"X": grads, "Scale": [self._loss_scaling]},
            {"Out": grads, "FoundInfinite": [self._found_inf]},
        )
        if self._use_dynamic_loss_scaling:
            helper.append_op(
                "update_loss_scaling",
                {
                    "FoundInfinite": [self._found_inf],
                    "PrevLossScaling": [self._loss_scaling],
                    "InGoodSteps": [self._good_steps],
                    "InBadSteps": [self._bad_steps],
                },
                {
                    "LossScaling": [self._loss_scaling],
                    "OutGoodSteps": [self._good_steps],
                    "OutBadSteps": [self._bad_steps],
                },
                {
                    "incr_every_n_steps": self._incr_every_n_steps,
                    "decr_every_n_nan_or_inf": self._decr_every_n_nan_or_inf,
                    "incr_ratio": self._incr_ratio,
                    "decr_ratio": self._decr_ratio,
                },
            )
        return self._optimizer.apply_gradients(params_grads)

    def minimize(
        self,
        loss: Any,
        startup_program: Any = None,
        parameter_list: Sequence | None = None,
        no_grad_set: Any = None,
    ) -> tuple:
        """Scaled backward, unscale/overflow check, loss-scale update, optimizer updates."""
        from oar.framework.mode import in_dygraph_mode

        if in_dygraph_mode():
            raise RuntimeError("mixed_precision.decorate: static graphs only (as Fluid 1.8)")
        params_grads = self.backward(loss, startup_program, parameter_list, no_grad_set)
        from oar.framework.program import default_startup_program, program_guard

        with program_guard(loss.block.program, startup_program or default_startup_program()):
            optimize_ops = self.apply_gradients(params_grads)
        return optimize_ops, params_grads


def decorate(
    optimizer: Any,
    amp_lists: AutoMixedPrecisionLists | None = None,
    init_loss_scaling: float = 2**15,
    incr_every_n_steps: int = 1000,
    decr_every_n_nan_or_inf: int = 2,
    incr_ratio: float = 2.0,
    decr_ratio: float = 0.8,
    use_dynamic_loss_scaling: bool = True,
) -> OptimizerWithMixedPrecision:
    """Wrap ``optimizer`` for loss-scaled (mixed-precision) training."""
    return OptimizerWithMixedPrecision(
        optimizer,
        amp_lists or AutoMixedPrecisionLists(),
        init_loss_scaling,
        use_dynamic_loss_scaling,
        incr_every_n_steps,
        decr_every_n_nan_or_inf,
        incr_ratio,
        decr_ratio,
    )
