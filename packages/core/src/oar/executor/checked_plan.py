"""The plan the Executor builds while ``FLAGS_check_nan_inf`` is on.

A :class:`CheckedPlan` is a :class:`~oar.executor.plan.Plan` whose every step
checks its outputs after the kernel ran, so the first op producing NaN or
Inf raises :class:`~oar.nan_inf.NanInfError` naming the op, the output and
the line that created the op. It runs the plan's general loop (not the
generated straight-line code), which is slower and only used while checking:
with the flag off the Executor builds plain plans, unchanged.
"""

from __future__ import annotations

from typing import Any

from oar.executor.plan import Plan
from oar.nan_inf import check_output


class _CheckedCall:
    """A step's kernel call followed by a finiteness check of the outputs it wrote."""

    __slots__ = ("_call", "_op", "_outs")

    def __init__(self, call: Any, op: Any) -> None:
        self._call = call
        self._op = op
        self._outs = tuple(
            (slot, name) for slot, names in op.outputs.items() for name in names if name
        )

    def run(self, env: dict, lods: dict | None = None) -> None:
        self._call.run(env, lods)
        op = self._op
        for slot, name in self._outs:
            value = env.get(name)
            if value is not None:
                check_output(op.type, slot, name, value, op.callsite, True)

    def __getattr__(self, name: str) -> Any:  # everything else is the wrapped call's
        return getattr(self._call, name)


class CheckedPlan(Plan):
    """A plan that checks every op's outputs for NaN/Inf (``FLAGS_check_nan_inf``)."""

    checks_nan_inf = True
    fuses = False  # the op that first produces NaN/Inf is named, not a fused chain

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.steps = [s._replace(call=_CheckedCall(s.call, s.op)) for s in self.steps]
        self.has_lod_ops = True  # always the general loop, which runs ``step.call.run``
