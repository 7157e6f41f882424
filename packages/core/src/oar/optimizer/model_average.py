"""ModelAverage (Fluid 1.8): average each parameter over a sliding window of recent steps.

Constructing it appends an ``average_accumulates`` op per parameter to the main
program; ``apply(exe)`` backs the parameters up and loads
``(sum_1+sum_2+sum_3) / (num_accumulates+old_num_accumulates)``;
``restore(exe)`` puts the trained values back.
"""

from __future__ import annotations

from typing import Any

from oar.framework import unique_name
from oar.framework.program import Program, default_main_program, name_scope, program_guard
from oar.optimizer._averaging import AveragingBase, clone_var
from oar.optimizer._checks import check_float
from oar.optimizer.base import Optimizer


class ModelAverage(AveragingBase, Optimizer):
    type = "average_accumulate"

    def __init__(
        self,
        average_window_rate: float,
        min_average_window: int = 10000,
        max_average_window: int = 10000,
        regularization: Any = None,
        name: str | None = None,
    ) -> None:
        Optimizer.__init__(self, 0.0, regularization=regularization, name=name)
        self.average_window = check_float(
            "ModelAverage", "average_window_rate", average_window_rate, 0.0
        )
        for label, v in (
            ("min_average_window", min_average_window),
            ("max_average_window", max_average_window),
        ):
            if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
                raise ValueError(f"ModelAverage: {label} must be an int > 0, given {v!r}")
        if min_average_window > max_average_window:
            raise ValueError(
                f"ModelAverage: min_average_window ({min_average_window}) must not exceed "
                f"max_average_window ({max_average_window})"
            )
        self.min_average_window = min_average_window
        self.max_average_window = max_average_window
        main = default_main_program()
        self.params_grads = []
        for param in main.global_block().all_parameters():
            if param.do_model_average is not False:
                backup = param.block.create_var(
                    name=unique_name.generate_with_ignorable_key(".".join([param.name, "tmp"])),
                    shape=param.shape,
                    dtype=param.dtype,
                    persistable=False,
                    stop_gradient=True,
                )
                self.params_grads.append((param, backup))
        with main._optimized_guard(2), name_scope("move_average"):
            for param, _ in self.params_grads:
                self._append_average_accumulate_op(param)
        self.apply_program = self._build(self._add_average_apply_op)
        self.restore_program = self._build(self._add_average_restore_op)

    def _append_average_accumulate_op(self, param: Any) -> None:
        acc = {n: self._add_accumulator(n, param) for n in ("sum_1", "sum_2", "sum_3")}
        for n in ("num_accumulates", "old_num_accumulates", "num_updates"):
            acc[n] = self._add_accumulator(n, param, dtype="int64", shape=[1])
        param.block.append_op(
            "average_accumulates",
            {"param": [param], **{f"in_{n}": [v] for n, v in acc.items()}},
            {f"out_{n}": [v] for n, v in acc.items()},
            {
                "average_window": self.average_window,
                "min_average_window": self.min_average_window,
                "max_average_window": self.max_average_window,
            },
        )

    def _build(self, add) -> Program:
        prog = Program()
        with program_guard(prog):
            for pg in self.params_grads:
                add(prog.global_block(), pg)
        return prog

    def _add_average_apply_op(self, block: Any, param_grad: tuple) -> None:
        param, backup = clone_var(block, param_grad[0]), clone_var(block, param_grad[1])
        acc = {
            n: clone_var(block, self._get_accumulator(n, param_grad[0]))
            for n in ("sum_1", "sum_2", "sum_3", "num_accumulates", "old_num_accumulates")
        }
        block.append_op("assign", {"X": [param]}, {"Out": [backup]})
        count = _tmp(block, "int64", [1])
        block.append_op(
            "sum", {"X": [acc["num_accumulates"], acc["old_num_accumulates"]]}, {"Out": [count]}
        )
        total = _tmp(block, param.dtype, param.shape)
        block.append_op("sum", {"X": [acc["sum_1"], acc["sum_2"], acc["sum_3"]]}, {"Out": [total]})
        fcount = _tmp(block, param.dtype, [1])
        block.append_op(
            "cast",
            {"X": [count]},
            {"Out": [fcount]},
            {"in_dtype": "int64", "out_dtype": param.dtype},
        )
        block.append_op(
            "elementwise_div", {"X": [total], "Y": [fcount]}, {"Out": [param]}, {"axis": -1}
        )

    def _add_average_restore_op(self, block: Any, param_grad: tuple) -> None:
        param, backup = clone_var(block, param_grad[0]), clone_var(block, param_grad[1])
        block.append_op("assign", {"X": [backup]}, {"Out": [param]})

    def minimize(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(
            "ModelAverage is not an optimizer to minimize with: build it after the real "
            "optimizer's minimize, then use apply()/restore()"
        )


def _tmp(block: Any, dtype: str, shape: Any) -> Any:
    return block.create_var(
        name=unique_name.generate_with_ignorable_key("model_average.tmp"),
        dtype=dtype,
        shape=list(shape),
        stop_gradient=True,
    )
