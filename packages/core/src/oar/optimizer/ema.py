"""ExponentialMovingAverage (Fluid 1.8): shadow parameters updated after each optimizer step.

``update()`` appends ``ema = decay*ema + (1-decay)*param`` for every parameter
(with ``do_model_average`` not False) to the main program and advances
``@EMA_STEP_COUNTER@``. ``apply(exe)`` backs the parameters up and loads the
bias-corrected averages ``ema / (1 - decay**step)``; ``restore(exe)`` undoes it.
With ``thres_steps`` (a step Variable) the decay is ``min(decay, (t+1)/(t+10))``.

Deliberate difference: Fluid 1.8.5's apply program also writes the corrected
value back into the shadow variable, so every further ``apply`` divides again
and the average drifts (checked against it); here ``apply`` leaves the shadow
variables alone. The first ``apply`` and every ``restore`` give Fluid's numbers.
"""

from __future__ import annotations

from oar.framework import unique_name
from oar.framework.program import Program, default_main_program, name_scope, program_guard
from oar.framework.variable import Variable
from oar.layers.learning_rate_scheduler import autoincreased_step_counter
from oar.layers.tensor import create_global_var
from oar.optimizer._averaging import AveragingBase, clone_var
from oar.optimizer._checks import check_float

_STEP_COUNTER = "@EMA_STEP_COUNTER@"


def _op(block, type, inputs, attrs=None, out=None, dtype="float32", shape=None):
    if out is None:
        out = block.create_var(
            name=unique_name.generate_with_ignorable_key("ema.tmp"),
            dtype=dtype,
            shape=shape,
            stop_gradient=True,
        )
    block.append_op(type, inputs, {"Out": [out]}, attrs or {})
    return out


class ExponentialMovingAverage(AveragingBase):
    def __init__(
        self, decay: float = 0.999, thres_steps: Variable | None = None, name: str | None = None
    ) -> None:
        self._decay = check_float("ExponentialMovingAverage", "decay", decay, 0.0, 1.0)
        if thres_steps is not None and not isinstance(thres_steps, Variable):
            raise TypeError(
                f"ExponentialMovingAverage: thres_steps must be a Variable (e.g. a global step), "
                f"given {type(thres_steps).__name__}"
            )
        self._thres_steps = thres_steps
        self._name = name or ""
        main = default_main_program()
        self._decay_var = self._get_ema_decay(main)
        self._params_tmps = []
        for param in main.global_block().all_parameters():
            if param.do_model_average is not False:
                tmp = param.block.create_var(
                    name=unique_name.generate(".".join([self._name + param.name, "ema_tmp"])),
                    shape=param.shape,
                    dtype=param.dtype,
                    persistable=False,
                    stop_gradient=True,
                )
                self._params_tmps.append((param, tmp))
        self._ema_vars = {}
        for param, _ in self._params_tmps:
            with main._optimized_guard(2), name_scope("moving_average"):
                self._ema_vars[param.name] = create_global_var(
                    shape=list(param.shape),
                    value=0.0,
                    dtype=param.dtype,
                    persistable=True,
                    name=unique_name.generate(self._name + param.name + "_ema"),
                )
        self.apply_program = self._build_apply()
        self.restore_program = self._build_restore()

    def _get_ema_decay(self, main: Program) -> Variable:
        with main._lr_schedule_guard():
            decay_var = create_global_var(
                shape=[1],
                value=self._decay,
                dtype="float32",
                persistable=True,
                name=unique_name.generate("scheduled_ema_decay_rate"),
            )
            if self._thres_steps is not None:
                block = main.current_block()
                t = self._thres_steps
                if t.dtype != "float32":
                    t = _op(
                        block,
                        "cast",
                        {"X": [t]},
                        {"in_dtype": t.dtype, "out_dtype": "float32"},
                        shape=[1],
                    )
                num = _op(block, "scale", {"X": [t]}, {"scale": 1.0, "bias": 1.0}, shape=[1])
                den = _op(block, "scale", {"X": [t]}, {"scale": 1.0, "bias": 10.0}, shape=[1])
                decay_t = _op(block, "elementwise_div", {"X": [num], "Y": [den]}, shape=[1])
                cap = _op(
                    block,
                    "fill_constant",
                    {},
                    {"shape": [1], "dtype": "float32", "value": self._decay},
                )
                _op(block, "elementwise_min", {"X": [decay_t], "Y": [cap]}, out=decay_var)
        return decay_var

    def update(self) -> None:
        """Append the moving-average update of every parameter to the main program (call after minimize)."""
        main = default_main_program()
        autoincreased_step_counter(counter_name=_STEP_COUNTER)
        block = main.global_block()
        with main._optimized_guard(2), name_scope("moving_average"):
            one_minus = _op(
                block, "scale", {"X": [self._decay_var]}, {"scale": -1.0, "bias": 1.0}, shape=[1]
            )
            for param, _ in self._params_tmps:
                ema = self._ema_vars[param.name]
                a = _op(
                    block,
                    "elementwise_mul",
                    {"X": [ema], "Y": [self._decay_var]},
                    {"axis": -1},
                    dtype=param.dtype,
                )
                b = _op(
                    block,
                    "elementwise_mul",
                    {"X": [param], "Y": [one_minus]},
                    {"axis": -1},
                    dtype=param.dtype,
                )
                _op(block, "elementwise_add", {"X": [a], "Y": [b]}, {"axis": -1}, out=ema)

    def _build_apply(self) -> Program:
        prog = Program()
        block = prog.global_block()
        with program_guard(prog):
            counter = block.create_var(
                name=_STEP_COUNTER, shape=[1], dtype="int64", persistable=True
            )
            step = _op(
                block,
                "cast",
                {"X": [counter]},
                {"in_dtype": "int64", "out_dtype": "float32"},
                shape=[1],
            )
            decay = clone_var(block, self._decay_var)
            decay_pow = _op(block, "elementwise_pow", {"X": [decay], "Y": [step]}, shape=[1])
            denom = _op(block, "scale", {"X": [decay_pow]}, {"scale": -1.0, "bias": 1.0}, shape=[1])
            # step 0: the average is still 0, and 0 / tiny == 0 == ema, which is Fluid's uncorrected branch
            tiny = _op(
                block, "fill_constant", {}, {"shape": [1], "dtype": "float32", "value": 1e-30}
            )
            denom = _op(block, "elementwise_max", {"X": [denom], "Y": [tiny]}, shape=[1])
            for param, tmp in self._params_tmps:
                p = clone_var(block, param)
                t = clone_var(block, tmp)
                ema = clone_var(block, self._ema_vars[param.name])
                _op(block, "assign", {"X": [p]}, out=t)
                _op(block, "elementwise_div", {"X": [ema], "Y": [denom]}, {"axis": -1}, out=p)
        return prog

    def _build_restore(self) -> Program:
        prog = Program()
        block = prog.global_block()
        with program_guard(prog):
            for param, tmp in self._params_tmps:
                _op(block, "assign", {"X": [clone_var(block, tmp)]}, out=clone_var(block, param))
        return prog
