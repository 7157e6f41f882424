"""DGCMomentumOptimizer: momentum until ``rampup_begin_step``, then deep gradient compression
(top-k sparsified updates with momentum correction).

One trainer: one ``dgc_momentum`` op per parameter. With ``num_trainers > 1`` (data
parallel places, or trainers of a collective job): per parameter ``dgc`` encodes the local
top-k, two ``c_allgather`` ops on ring 0 (oar-dist) exchange the indices and values, and
``dgc_apply`` applies their sum. The data-parallel pass leaves these gradients out of its
dense all-reduce, so only the sparse pieces travel.
"""

from __future__ import annotations

from typing import Any

from oar.errors import ArgumentError
from oar.optimizer.base import Optimizer

__all__ = ["DGCMomentumOptimizer"]


class DGCMomentumOptimizer(Optimizer):
    type = "dgc_momentum"

    def __init__(
        self,
        learning_rate,
        momentum,
        rampup_begin_step,
        rampup_step=1,
        sparsity=(0.999,),
        parameter_list=None,
        use_nesterov=False,
        num_trainers=None,
        regularization=None,
        grad_clip=None,
        name=None,
    ) -> None:
        super().__init__(learning_rate, parameter_list, regularization, grad_clip, name)
        if (
            isinstance(rampup_begin_step, bool)
            or not isinstance(rampup_begin_step, int)
            or rampup_begin_step < 0
        ):
            raise ArgumentError(
                "DGCMomentumOptimizer",
                f"rampup_begin_step must be an int >= 0, given {rampup_begin_step!r}",
            )
        if isinstance(rampup_step, bool) or not isinstance(rampup_step, int) or rampup_step < 1:
            raise ArgumentError(
                "DGCMomentumOptimizer", f"rampup_step must be a positive int, given {rampup_step!r}"
            )
        sp = list(sparsity)
        if not sp or not all(isinstance(s, (int, float)) and 0 <= s < 1 for s in sp):
            raise ArgumentError(
                "DGCMomentumOptimizer",
                f"sparsity must be a list of values in [0, 1), given {sparsity!r}",
            )
        self._momentum = float(momentum)
        self._rampup_begin_step, self._rampup_step = rampup_begin_step, rampup_step
        self._sparsity = [float(s) for s in sp]
        self._use_nesterov = bool(use_nesterov)
        if num_trainers is not None and (
            isinstance(num_trainers, bool) or not isinstance(num_trainers, int) or num_trainers < 1
        ):
            raise ArgumentError(
                "DGCMomentumOptimizer",
                f"num_trainers must be None or a positive int, given {num_trainers!r}",
            )
        self._num_trainers = num_trainers
        self._step_var: Any = None

    def _create_accumulators(self, block, parameters):
        from oar import layers
        from oar.framework import unique_name

        for p in parameters:
            self._add_accumulator("dgc_u", p)
            self._add_accumulator("dgc_v", p)
        # the step counter the sparsity ramp reads: 0 on the first update
        self._step_var = layers.create_global_var(
            [1], -1.0, "float32", persistable=True, name=unique_name.generate("dgc_step")
        )
        layers.increment(self._step_var, 1.0, in_place=True)

    def _ramp_attrs(self) -> dict:
        return {
            "mu": self._momentum,
            "use_nesterov": self._use_nesterov,
            "rampup_begin_step": float(self._rampup_begin_step),
        }

    def _append_optimize_op(self, block, param_and_grad):
        param, grad = param_and_grad
        u, v = self._get_accumulator("dgc_u", param), self._get_accumulator("dgc_v", param)
        if self._num_trainers is not None and self._num_trainers > 1:
            return self._append_collective(block, param_and_grad, u, v)
        return block.append_op(
            "dgc_momentum",
            {
                "Param": [param],
                "Grad": [grad],
                "U": [u],
                "V": [v],
                "LearningRate": [self._create_param_lr(param_and_grad)],
                "CurrentStep": [self._step_var],
            },
            {"ParamOut": [param], "UOut": [u], "VOut": [v]},
            {
                "mu": self._momentum,
                "use_nesterov": self._use_nesterov,
                "sparsity": self._sparsity,
                "rampup_begin_step": float(self._rampup_begin_step),
                "rampup_step": float(self._rampup_step),
            },
        )

    def _append_collective(self, block, param_and_grad, u, v):
        from oar.framework import unique_name
        from oar.plugins import registries

        if "c_allgather" not in registries().ops:
            raise ArgumentError(
                "DGCMomentumOptimizer",
                f"num_trainers={self._num_trainers} exchanges gradients with c_allgather, "
                "which the oar-dist plugin provides (pip install oar-dist)",
            )
        param, grad = param_and_grad

        def tmp(kind, dtype):
            name = unique_name.generate(f"{param.name}.dgc_{kind}")
            return block.create_var(name=name, shape=[-1], dtype=dtype, stop_gradient=True)

        index, value = tmp("index", "int64"), tmp("value", param.dtype)
        block.append_op(
            "dgc",
            {"Grad": [grad], "U": [u], "V": [v], "CurrentStep": [self._step_var]},
            {"UOut": [u], "VOut": [v], "EncodeIndex": [index], "EncodeValue": [value]},
            dict(
                self._ramp_attrs(),
                sparsity=self._sparsity,
                rampup_step=float(self._rampup_step),
            ),
        )
        gathered = []
        for piece in (index, value):
            out = tmp("gathered", piece.dtype)
            block.append_op(
                "c_allgather",
                {"X": [piece]},
                {"Out": [out]},
                {"ring_id": 0, "nranks": self._num_trainers, "use_calc_stream": True},
            )
            gathered.append(out)
        return block.append_op(
            "dgc_apply",
            {
                "Param": [param],
                "U": [u],
                "Index": [gathered[0]],
                "Value": [gathered[1]],
                "LearningRate": [self._create_param_lr(param_and_grad)],
                "CurrentStep": [self._step_var],
            },
            {"ParamOut": [param], "UOut": [u]},
            self._ramp_attrs(),
        )
