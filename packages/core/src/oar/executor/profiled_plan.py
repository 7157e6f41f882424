"""The plans the Executor builds while ``fluid.profiler`` is on: every kernel call timed.

Like :mod:`oar.executor.checked_plan`, a profiled plan runs the general loop
over steps whose calls are wrapped; with the profiler off the Executor builds
plain plans, unchanged.
"""

from __future__ import annotations

import time
from typing import Any

from oar.executor.checked_plan import CheckedPlan
from oar.executor.plan import Plan
from oar.profiler import record


class _TimedCall:
    """A step's kernel call, recorded in the profiler with the op's type."""

    __slots__ = ("_call", "_type")

    def __init__(self, call: Any, op: Any) -> None:
        self._call = call
        self._type = op.type

    def run(self, env: dict, lods: dict | None = None) -> None:
        t0 = time.perf_counter_ns()
        try:
            self._call.run(env, lods)
        finally:
            record(self._type, t0, time.perf_counter_ns())

    def __getattr__(self, name: str) -> Any:  # everything else is the wrapped call's
        return getattr(self._call, name)


class _Profiled:
    profiled = True
    fuses = False  # every op timed on its own, not a fused chain

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.steps = [s._replace(call=_TimedCall(s.call, s.op)) for s in self.steps]
        self.has_lod_ops = True  # the general loop, which runs ``step.call.run``


class ProfiledPlan(_Profiled, Plan):
    """A plan that times every op (``fluid.profiler``)."""


class ProfiledCheckedPlan(_Profiled, CheckedPlan):
    """Timed and checked for NaN/Inf (profiler on and ``FLAGS_check_nan_inf``)."""


def plan_class(check_nan_inf: bool) -> type:
    return ProfiledCheckedPlan if check_nan_inf else ProfiledPlan
