"""Learning-rate schedules in the static graph (Fluid 1.8's ``fluid.layers.*_decay``).

Every schedule reads the persistable global step ``@LR_DECAY_COUNTER@``, which
an ``increment`` op at the head of the main program advances once per
``exe.run`` (seed 002: "each exe.run adds 1 to step"); the first run sees
step 0 (``noam_decay`` counts from 1). The schedule's ops carry op_role
LRSched, so ``clone(for_test=True)`` drops them.

Fluid builds ``piecewise_decay``/``linear_lr_warmup`` with a ``Switch``; here
the same values come from arithmetic on the integer step: ``step < b`` is
``clip(ceil(b) - step, 0, 1)``, and ``floor(step / n)`` is
``elementwise_floordiv`` — one flat op list, no control-flow blocks.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from oar.errors import ArgumentError, ArgumentTypeError
from oar.framework import unique_name
from oar.framework.mode import current_builder
from oar.framework.program import default_main_program
from oar.framework.variable import Variable
from oar.initializer import Constant
from oar.layer_helper import LayerHelper

__all__ = [
    "exponential_decay",
    "natural_exp_decay",
    "inverse_time_decay",
    "polynomial_decay",
    "piecewise_decay",
    "cosine_decay",
    "noam_decay",
    "linear_lr_warmup",
    "autoincreased_step_counter",
]

LR_DECAY_COUNTER = "@LR_DECAY_COUNTER@"
# under fluid.dygraph.guard() each function returns the matching fluid.dygraph schedule object, as Fluid does


def autoincreased_step_counter(
    counter_name: str | None = None, begin: int = 1, step: int = 1
) -> Variable:
    """A persistable int64 counter: starts at ``begin - 1``; each run first adds ``step`` (Fluid 1.8)."""
    helper = LayerHelper("global_step_counter")
    name = counter_name or "@STEP_COUNTER@"
    block = default_main_program().global_block()
    counter = block.vars.get(name)
    if counter is None:
        counter = helper.create_global_variable(
            name=name, dtype="int64", shape=[1], persistable=True, stop_gradient=True
        )
        helper.set_variable_initializer(counter, Constant(float(begin - 1), force_cpu=True))
        block._prepend_op("increment", {"X": [counter]}, {"Out": [counter]}, {"step": float(step)})
    return counter


def _eager(name: str, *args: Any, **kwargs: Any) -> tuple:
    """The ``fluid.dygraph`` schedule Fluid returns instead of ops in dygraph mode."""
    return (name, args, kwargs)


# --- small op helpers (all appended under the LRSched role by the callers) -------------------------
def _tmp(dtype: str = "float32") -> Variable:
    return (
        default_main_program()
        .current_block()
        .create_var(
            name=unique_name.generate_with_ignorable_key("lr_sched.tmp"),
            dtype=dtype,
            shape=[1],
            stop_gradient=True,
        )
    )


def _op(type: str, inputs: dict, attrs: dict | None = None) -> Variable:
    out = _tmp()
    default_main_program().current_block().append_op(type, inputs, {"Out": [out]}, attrs or {})
    return out


def _const(value: float) -> Variable:
    return _op("fill_constant", {}, {"shape": [1], "dtype": "float32", "value": float(value)})


def _scale(x: Variable, scale: float, bias: float = 0.0) -> Variable:
    return _op(
        "scale", {"X": [x]}, {"scale": float(scale), "bias": float(bias), "bias_after_scale": True}
    )


def _binary(type: str, x: Variable, y: Variable) -> Variable:
    return _op(type, {"X": [x], "Y": [y]}, {"axis": -1})


def _step(begin: int = 0) -> Variable:
    counter = autoincreased_step_counter(LR_DECAY_COUNTER, begin=begin, step=1)
    return _op("cast", {"X": [counter]}, {"in_dtype": "int64", "out_dtype": "float32"})


def _less_than(step: Variable, bound: float) -> Variable:
    """1.0 while the integer ``step`` < ``bound``, else 0.0."""
    return _op(
        "clip", {"X": [_scale(step, -1.0, float(math.ceil(bound)))]}, {"min": 0.0, "max": 1.0}
    )


def _times_lr(learning_rate: Any, x: Variable, factor: float = 1.0) -> Variable:
    if isinstance(learning_rate, Variable):
        return _binary("elementwise_mul", _scale(x, factor) if factor != 1.0 else x, learning_rate)
    return _scale(x, float(learning_rate) * factor)


def _check_lr(name: str, learning_rate: Any) -> None:
    if isinstance(learning_rate, bool) or not isinstance(learning_rate, (int, float, Variable)):
        raise ArgumentTypeError(
            name,
            f"learning_rate must be a float or a Variable, given {type(learning_rate).__name__}",
        )


def _check_positive(name: str, arg: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ArgumentError(name, f"{arg} must be a number > 0, given {value!r}")


def _div_res(name: str, decay_steps: Any, staircase: bool) -> Variable:
    _check_positive(name, "decay_steps", decay_steps)
    step = _step()
    if staircase:
        return _binary("elementwise_floordiv", step, _const(decay_steps))
    return _scale(step, 1.0 / decay_steps)


# --- the schedules ----------------------------------------------------------------------------------
def exponential_decay(
    learning_rate: Any, decay_steps: int, decay_rate: float, staircase: bool = False
) -> Variable:
    """``lr * decay_rate ** (step / decay_steps)`` (the exponent floored when ``staircase``)."""
    _check_lr("exponential_decay", learning_rate)

    def ops() -> Variable:
        with default_main_program()._lr_schedule_guard():
            div = _div_res("exponential_decay", decay_steps, staircase)
            return _times_lr(learning_rate, _binary("elementwise_pow", _const(decay_rate), div))

    return current_builder().lr_schedule(
        ops, _eager("ExponentialDecay", learning_rate, decay_steps, decay_rate, staircase)
    )


def natural_exp_decay(
    learning_rate: Any, decay_steps: int, decay_rate: float, staircase: bool = False
) -> Variable:
    """``lr * exp(-decay_rate * step / decay_steps)``."""
    _check_lr("natural_exp_decay", learning_rate)

    def ops() -> Variable:
        with default_main_program()._lr_schedule_guard():
            div = _div_res("natural_exp_decay", decay_steps, staircase)
            return _times_lr(learning_rate, _op("exp", {"X": [_scale(div, -float(decay_rate))]}))

    return current_builder().lr_schedule(
        ops, _eager("NaturalExpDecay", learning_rate, decay_steps, decay_rate, staircase)
    )


def inverse_time_decay(
    learning_rate: Any, decay_steps: int, decay_rate: float, staircase: bool = False
) -> Variable:
    """``lr / (1 + decay_rate * step / decay_steps)``."""
    _check_lr("inverse_time_decay", learning_rate)

    def ops() -> Variable:
        with default_main_program()._lr_schedule_guard():
            div = _div_res("inverse_time_decay", decay_steps, staircase)
            return _times_lr(
                learning_rate, _op("reciprocal", {"X": [_scale(div, float(decay_rate), 1.0)]})
            )

    return current_builder().lr_schedule(
        ops, _eager("InverseTimeDecay", learning_rate, decay_steps, decay_rate, staircase)
    )


def polynomial_decay(
    learning_rate: Any,
    decay_steps: int,
    end_learning_rate: float = 0.0001,
    power: float = 1.0,
    cycle: bool = False,
) -> Variable:
    """``(lr - end) * (1 - step/decay_steps) ** power + end``; ``cycle`` stretches decay_steps by ceil(step/decay_steps)."""
    _check_lr("polynomial_decay", learning_rate)
    _check_positive("polynomial_decay", "decay_steps", decay_steps)

    def ops() -> Variable:
        if isinstance(learning_rate, Variable):
            raise ArgumentTypeError(
                "polynomial_decay",
                "learning_rate must be a float here (as in Fluid's static graph)",
            )
        with default_main_program()._lr_schedule_guard():
            step = _step()
            if cycle:
                neg_ceil = _binary("elementwise_floordiv", _scale(step, -1.0), _const(decay_steps))
                div = _binary(
                    "elementwise_max", _scale(neg_ceil, -1.0), _const(1.0)
                )  # step 0 counts as cycle 1
                frac = _binary("elementwise_div", step, _scale(div, float(decay_steps)))
            else:
                frac = _scale(
                    _binary("elementwise_min", step, _const(decay_steps)), 1.0 / decay_steps
                )
            base = _scale(frac, -1.0, 1.0)
            powed = _binary("elementwise_pow", base, _const(power))
            return _scale(
                powed, float(learning_rate) - float(end_learning_rate), float(end_learning_rate)
            )

    return current_builder().lr_schedule(
        ops, _eager("PolynomialDecay", learning_rate, decay_steps, end_learning_rate, power, cycle)
    )


def piecewise_decay(boundaries: Sequence, values: Sequence) -> Variable:
    """``values[i]`` while ``step < boundaries[i]`` (first such i), else ``values[-1]``."""
    boundaries, values = list(boundaries), list(values)
    if len(values) - len(boundaries) != 1:
        raise ArgumentError(
            "piecewise_decay",
            f"len(values) must be len(boundaries) + 1, given {len(values)} values "
            f"and {len(boundaries)} boundaries",
        )
    if any(b2 < b1 for b1, b2 in zip(boundaries, boundaries[1:])):
        raise ArgumentError(
            "piecewise_decay", f"boundaries must be in increasing order, given {boundaries}"
        )

    def ops() -> Variable:
        with default_main_program()._lr_schedule_guard():
            step = _step()
            if not boundaries:
                return _const(values[0])
            terms = [
                _scale(_less_than(step, b), float(values[i]) - float(values[i + 1]))
                for i, b in enumerate(boundaries)
            ]
            total = _op("sum", {"X": terms}) if len(terms) > 1 else terms[0]
            return _scale(total, 1.0, float(values[-1]))

    return current_builder().lr_schedule(ops, _eager("PiecewiseDecay", boundaries, values, 0))


def cosine_decay(learning_rate: Any, step_each_epoch: int, epochs: int) -> Variable:
    """``lr * 0.5 * (cos(floor(step / step_each_epoch) * pi / epochs) + 1)``."""
    _check_lr("cosine_decay", learning_rate)
    _check_positive("cosine_decay", "step_each_epoch", step_each_epoch)
    _check_positive("cosine_decay", "epochs", epochs)

    def ops() -> Variable:
        with default_main_program()._lr_schedule_guard():
            epoch = _binary("elementwise_floordiv", _step(), _const(step_each_epoch))
            cos = _op("cos", {"X": [_scale(epoch, math.pi / epochs)]})
            return _times_lr(learning_rate, _scale(cos, 0.5, 0.5))

    return current_builder().lr_schedule(
        ops, _eager("CosineDecay", learning_rate, step_each_epoch, epochs)
    )


def noam_decay(d_model: Any, warmup_steps: Any, learning_rate: Any = 1.0) -> Variable:
    """``lr * d_model**-0.5 * min(step**-0.5, step * warmup_steps**-1.5)``, step counted from 1."""
    _check_lr("noam_decay", learning_rate)
    _check_positive("noam_decay", "d_model", d_model)
    _check_positive("noam_decay", "warmup_steps", warmup_steps)

    def ops() -> Variable:
        with default_main_program()._lr_schedule_guard():
            step = _step(begin=1)
            a = _binary("elementwise_pow", step, _const(-0.5))
            b = _scale(step, float(warmup_steps) ** -1.5)
            return _times_lr(
                learning_rate, _binary("elementwise_min", a, b), float(d_model) ** -0.5
            )

    return current_builder().lr_schedule(
        ops, _eager("NoamDecay", d_model, warmup_steps, learning_rate=learning_rate)
    )


def linear_lr_warmup(
    learning_rate: Any, warmup_steps: int, start_lr: float, end_lr: float
) -> Variable:
    """``start_lr + (end_lr - start_lr) * step / warmup_steps`` while step < warmup_steps, then ``learning_rate``."""
    _check_positive("linear_lr_warmup", "warmup_steps", warmup_steps)

    def ops() -> Variable:
        _check_lr("linear_lr_warmup", learning_rate)
        if isinstance(learning_rate, Variable) and learning_rate.dtype not in ("float32", None):
            raise ArgumentTypeError(
                "linear_lr_warmup", f"learning_rate must be float32, given {learning_rate.dtype}"
            )
        with default_main_program()._lr_schedule_guard():
            step = _step()
            warm = _scale(step, (float(end_lr) - float(start_lr)) / warmup_steps, float(start_lr))
            mask = _less_than(step, warmup_steps)
            base = learning_rate if isinstance(learning_rate, Variable) else _const(learning_rate)
            return _binary(
                "elementwise_add",
                base,
                _binary("elementwise_mul", mask, _binary("elementwise_sub", warm, base)),
            )

    return current_builder().lr_schedule(
        ops, _eager("LinearLrWarmup", learning_rate, warmup_steps, start_lr, end_lr)
    )
