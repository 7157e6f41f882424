"""A dygraph optimizer's update pass, run through its pipeline once and replayed after.

In dygraph mode ``minimize`` runs the optimizer's whole pipeline every step: per parameter
the learning-rate lookup, the accumulators, ``_append_optimize_op`` and the eager block's op
normalisation, then the tracer's generic path for each update op. For an optimizer whose
update ops do not change from step to step, that is the same list of kernel calls every
step. So the first pass is recorded (every op the eager block runs) and the following ones
replay the recorded kernel calls on the current values (the static executor compiles a
plan the same way), while the pass is of the same kind:

- the optimizer is one of :data:`REPLAYED` (exactly: a subclass may append other ops), its
  settings are unchanged, it has no gradient clip or regularization, and neither has any
  parameter; every parameter's learning-rate multiplier is 1;
- the same parameters, in the same order, have dense gradients this step.

Anything else runs the pipeline (and records it anew); so does a pass that creates
accumulators (it also runs their initialisers). The learning rate is still set each step (a
schedule advances), and the accumulators are the same variables, so ``set_dict`` and
``state_dict`` see what they always did.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from oar.errors import OarError
from oar.framework.program import default_main_program

_SCALARS = frozenset((int, float, bool, str, type(None)))


def _replayed() -> tuple:
    from oar.optimizer.adadelta import Adadelta
    from oar.optimizer.adagrad import Adagrad
    from oar.optimizer.adam import Adam
    from oar.optimizer.adamax import Adamax
    from oar.optimizer.momentum import Momentum
    from oar.optimizer.rmsprop import RMSProp
    from oar.optimizer.sgd import SGD

    return (SGD, Momentum, Adam, Adamax, Adagrad, RMSProp, Adadelta)


#: the optimizer classes whose update ops depend on their settings only (filled on first use)
REPLAYED: list = []
#: optimizer -> the plan of its last recorded pass (kept off the optimizer: its settings are
#: part of a plan's key)
_plans: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def run_update_pass(builder: Any, opt: Any, params_grads: list, run: Callable) -> list:
    """``run(params_grads)``, or its recorded kernel calls replayed (see the module)."""
    key = _key(opt, params_grads)
    plan = _plans.get(opt)
    if key is not None and plan is not None and plan.key == key:
        builder.set_learning_rate(opt)
        plan.replay(params_grads)
        return []
    if key is None:
        return run(params_grads)
    block = builder.update_block()
    block._recording = recorded = []
    before = _accumulators(opt)
    try:
        ops = run(params_grads)
    finally:
        block._recording = None
    # a pass that created accumulators also ran their initialisers: record the next one
    fresh = _accumulators(opt) != before
    plan = None if fresh else _Plan.build(builder._tracer, key, recorded, params_grads)
    if plan is None:
        _plans.pop(opt, None)
    else:
        _plans[opt] = plan
    return ops


def _accumulators(opt: Any) -> int:
    return sum(len(per) for per in opt._accumulators.values())


def _key(opt: Any, params_grads: list) -> tuple | None:
    """What a replay must find unchanged, or None when this pass is not replayed."""
    if not REPLAYED:
        REPLAYED.extend(_replayed())
    if type(opt) not in REPLAYED or opt._grad_clip is not None or opt.regularization is not None:
        return None
    per_param = []
    for p, g in params_grads:
        if g is None or g._value.__class__ is not np.ndarray:
            return None
        if p.regularizer is not None or getattr(p, "gradient_clip_attr", None) is not None:
            return None
        if p.optimize_attr.get("learning_rate", 1.0) != 1.0 or not p.trainable:
            return None
        per_param.append(id(p))
    settings = tuple([v for v in opt.__dict__.values() if v.__class__ in _SCALARS])
    return (type(opt), id(default_main_program()), id(opt._learning_rate), settings, *per_param)


class _Plan:
    """The kernel calls of one recorded pass: per op the kernel, its complete attrs, where each
    input comes from (a variable, or the gradient of the i-th parameter) and which variable
    each output goes to."""

    __slots__ = ("key", "calls")

    @classmethod
    def build(cls, tracer: Any, key: tuple, recorded: list, params_grads: list) -> _Plan | None:
        grad_of = {id(g): i for i, (_p, g) in enumerate(params_grads)}
        calls = []
        try:
            for type_, ins, outs, attrs in recorded:
                call = _call(tracer, type_, ins, outs, attrs, grad_of)
                if call is None:
                    return None
                calls.append(call)
        except OarError:
            return None
        plan = cls()
        plan.key, plan.calls = key, tuple(calls)
        return plan

    def replay(self, params_grads: list) -> None:
        from oar.dygraph.tracer import _failure

        grads = [g._value for _p, g in params_grads]
        for info, kernel, attrs, getters, puts in self.calls:
            values = {}
            for slot, var, i in getters:
                values[slot] = grads[i] if var is None else var._value
            try:
                res = kernel(values, attrs)
            except OarError:
                raise
            except Exception as exc:
                raise _failure(info, values, exc) from exc
            for slot, var in puts:
                r = res.get(slot)
                if r is not None:
                    var._value = r


def _call(tracer: Any, type_: str, ins: dict, outs: dict, attrs: dict, grad_of: dict):
    """One recorded op as ``(info, kernel, attrs, getters, puts)``; None: not replayable
    (duplicable slots, values that are not plain arrays)."""
    info = tracer._info(type_)
    attrs = info.complete(attrs)
    getters, values = [], {}
    for slot, vs in ins.items():
        if len(vs) != 1 or vs[0]._value.__class__ is not np.ndarray:
            return None
        i = grad_of.get(id(vs[0]))
        getters.append((slot, None, i) if i is not None else (slot, vs[0], -1))
        values[slot] = vs[0]._value
    puts = []
    for slot, vs in outs.items():
        if len(vs) != 1:
            return None
        puts.append((slot, vs[0]))
    entry = tracer._kernel(info, tracer._dtype_of(info, values, attrs))
    kernel = entry.kernel if entry.direct else _with_wanted(entry, frozenset(outs))
    return info, kernel, attrs, tuple(getters), tuple(puts)


def _with_wanted(entry: Any, wanted: frozenset) -> Callable:
    return lambda values, attrs: entry.call(values, attrs, wanted)
