"""``fluid.contrib.extend_with_decoupled_weight_decay``: AdamW-style decoupled weight decay
for any optimizer class (Loshchilov & Hutter): before the update, every parameter (or those
``apply_decay_param_fun(name)`` accepts) becomes ``param - weight_decay * param``."""

from __future__ import annotations

from typing import Any

from oar.errors import ArgumentError, ArgumentTypeError

__all__ = ["extend_with_decoupled_weight_decay"]


class DecoupledWeightDecay:
    """The mixin: ``__init__(weight_decay, apply_decay_param_fun=None, **base_kwargs)``."""

    def __init__(self, weight_decay: Any, apply_decay_param_fun: Any = None, **kwargs: Any) -> None:
        from oar.framework.variable import Variable

        if isinstance(weight_decay, bool) or not isinstance(weight_decay, (int, float, Variable)):
            raise ArgumentTypeError(
                "DecoupledWeightDecay",
                f"weight_decay must be a float or a Variable, given {weight_decay!r}",
            )
        if isinstance(weight_decay, (int, float)) and weight_decay < 0:
            raise ArgumentError(
                "DecoupledWeightDecay", f"weight_decay must be >= 0, given {weight_decay}"
            )
        self._coeff = weight_decay
        self._apply_decay_param_fun = apply_decay_param_fun
        super().__init__(**kwargs)

    def _decay(self, params_grads: list) -> None:
        from oar import layers

        if isinstance(self._coeff, (int, float)) and self._coeff == 0.0:
            return
        for param, grad in params_grads:
            if grad is None:
                continue
            if self._apply_decay_param_fun is not None and not self._apply_decay_param_fun(
                param.name
            ):
                continue
            if isinstance(self._coeff, (int, float)):
                scaled = layers.scale(param, float(self._coeff))
            else:
                scaled = layers.elementwise_mul(param, self._coeff)
            layers.assign(layers.elementwise_sub(param, scaled), param)

    def minimize(self, loss, startup_program=None, parameter_list=None, no_grad_set=None):
        from oar.optimizer.base import _guard

        params_grads = self.backward(loss, startup_program, parameter_list, no_grad_set)
        with _guard(loss, startup_program):
            self._decay(params_grads)
        optimize_ops = self.apply_optimize(loss, startup_program, params_grads)
        return optimize_ops, params_grads


def extend_with_decoupled_weight_decay(base_optimizer: type) -> type:
    """``AdamW = extend_with_decoupled_weight_decay(fluid.optimizer.Adam)``;
    ``AdamW(weight_decay=0.01, learning_rate=1e-3).minimize(loss)``."""
    from oar.optimizer.base import Optimizer

    if not (isinstance(base_optimizer, type) and issubclass(base_optimizer, Optimizer)):
        raise ArgumentTypeError(
            "extend_with_decoupled_weight_decay",
            f"base_optimizer must be an optimizer class, given {base_optimizer!r}",
        )

    class OptimizerWithDecoupledWeightDecay(DecoupledWeightDecay, base_optimizer):  # type: ignore[misc,valid-type]
        pass

    return OptimizerWithDecoupledWeightDecay
