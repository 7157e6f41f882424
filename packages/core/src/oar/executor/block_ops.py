"""Ops the executor runs itself: control flow over sub-blocks and tensor-array writes.

``while`` and ``conditional_block`` run other blocks of the program, and
``write_to_array`` updates a tensor array (a Python list) held by the run's
value dict. None of them computes on a device, so they have no kernels: the
plan compiles each into a *host call* with the same interface as a
:class:`~oar.kernel_entry.KernelCall` (``run(env, lods)``, never inlined by the
step generator). A host call compiles the plan of its sub-block once, when
the enclosing plan is compiled, and reuses it on every iteration and run.

Scopes: the sub-block plan runs against the enclosing run's value dict, so the
sub-block reads and writes the enclosing block's variables directly; its own
(local) variables die at their last use in each pass, as Fluid's per-step
child scopes do. For the backward pass a ``while`` whose ``StepScopes`` output
is read by a ``while_grad`` keeps, per iteration, the values its sub-block
read (see ``control_flow_grad``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from oar.errors import OpRuntimeError
from oar.executor.stepgen import StepFailed
from oar.kernel_entry import EMPTY_VAR
from oar.lod_tensor import LoDTensor

#: op type -> ``factory(plan, op) -> host call``; filled by the modules defining them
HOST_OPS: dict[str, Callable] = {}


def host_op(op_type: str) -> Callable:
    def deco(factory: Callable) -> Callable:
        HOST_OPS[op_type] = factory
        return factory

    return deco


class HostCall:
    """The parts of the KernelCall interface a plan and its step generator use."""

    inlinable = False
    takes_lod = False
    singles: tuple = ()
    dups: tuple = ()
    densify: tuple = ()

    def shape_only_names(self) -> set:
        return set()

    def donation_candidates(self, dying: set, reads: list, writes: set) -> tuple:
        return ()

    def run(self, env: dict, lods: dict | None = None) -> None:  # pragma: no cover - abstract
        raise NotImplementedError


def sub_plan(plan: Any, op: Any, keep_locals: bool = False, keep_names: tuple = ()) -> Any:
    """The compiled plan of ``op``'s sub-block (same device, same plan class).

    ``keep_locals``: the sub-block's own variables are not freed, so the caller can
    keep them for the backward pass; ``keep_names``: values the caller reads after a pass."""
    idx = int(op.attrs["sub_block"])
    program = plan.program
    if not 0 < idx < len(program.blocks):
        raise OpRuntimeError(
            f"op '{op.type}' names sub_block {idx}, but the program has blocks 0..{len(program.blocks) - 1}",
            callsite=op.callsite,
            created=True,
        )
    return type(plan)(
        program, (), (), plan.device, block_idx=idx, keep_locals=keep_locals, keep_names=keep_names
    )


def check_inputs(sub: Any, env: dict, op: Any) -> None:
    """Every value the sub-block reads from outside must be there before it runs."""
    for name in sub.outer_inputs:
        if name not in env:
            raise sub._uninitialized(name)


def truth(value: Any, op: Any, name: str) -> bool:
    """A condition's value as a Python bool (it must hold exactly one element)."""
    if isinstance(value, LoDTensor):
        value = value._array
    size = getattr(value, "size", None)
    if size != 1:
        raise OpRuntimeError(
            f"op '{op.type}': condition '{name}' must hold one bool, given shape "
            f"{list(getattr(value, 'shape', ()))}",
            callsite=op.callsite,
            created=True,
        )
    return bool(value.reshape(-1)[0])


def _scopes_var(plan: Any, op: Any, slot: str) -> str | None:
    """The op's step-scopes output when a grad op reads it (training), else None."""
    names = [n for n in op.outputs.get(slot, ()) if n != EMPTY_VAR]
    if not names or op.attrs.get("is_test"):
        return None
    readers = plan.program_readers(names[0])
    return names[0] if readers else None


def snapshot(sub: Any, env: dict, lods: dict) -> tuple:
    """The outside values a pass of the sub-block reads, as they are before it runs."""
    return (
        {n: env[n] for n in sub.outer_inputs if n in env},
        {n: lods[n] for n in sub.outer_inputs if n in lods},
    )


def keep_locals(sub: Any, env: dict, lods: dict, step: tuple) -> None:
    """Move the pass's local values out of ``env`` into its saved step."""
    values, step_lods = step
    for n in sub.local_names:
        if n in env:
            values[n] = env.pop(n)
        if n in lods:
            step_lods[n] = lods.pop(n)


@host_op("while")
class WhileCall(HostCall):
    """Run the sub-block while ``Condition`` holds; the sub-block updates the condition."""

    def __init__(self, plan: Any, op: Any) -> None:
        self.op = op
        self.cond = op.inputs["Condition"][0]
        self.singles = (("Condition", self.cond),)
        self.dups = (("X", tuple(op.inputs.get("X", ()))),)
        self.scopes = _scopes_var(plan, op, "StepScopes")
        self.sub = sub_plan(plan, op, keep_locals=self.scopes is not None)
        self.takes_lod = self.sub.has_lod_ops
        self.loop = None  # the generated loop (made on first use)

    def run(self, env: dict, lods: dict | None = None) -> None:
        op, cond, sub = self.op, self.cond, self.sub
        check_inputs(sub, env, op)
        run_block = sub.run_block
        lods = {} if lods is None else lods
        if self.scopes is None:
            if not (sub.has_lod_ops or lods):
                self._fast_loop(env)
                return
            while truth(env[cond], op, cond):
                run_block(env, lods)
            return
        steps: list = []
        while truth(env[cond], op, cond):
            steps.append(snapshot(sub, env, lods))
            run_block(env, lods)
            keep_locals(sub, env, lods, steps[-1])
        env[self.scopes] = steps

    def _fast_loop(self, env: dict) -> None:
        """No LoD, nothing saved: the loop and its body as one generated function."""
        op, cond = self.op, self.cond
        if self.loop is None:
            self.loop = self.sub.loop_fn(cond)
        failed = None
        try:
            while not self.loop(env):  # a condition the generated code does not read itself
                if not truth(env[cond], op, cond):
                    break
                self.sub.run_block(env, {})
        except StepFailed as exc:
            failed = exc
        if failed is not None:  # raised outside the handler: no StepFailed in the chain
            self.sub._raise_step_error(failed.__cause__, self.sub.steps[failed.index], env)


@host_op("conditional_block")
class ConditionalBlockCall(HostCall):
    """Run the sub-block once if the condition holds (scalar) or every input is non-empty."""

    def __init__(self, plan: Any, op: Any) -> None:
        self.op = op
        self.scope = _scopes_var(plan, op, "Scope")
        self.sub = sub_plan(plan, op, keep_locals=self.scope is not None)
        self.takes_lod = self.sub.has_lod_ops
        self.conds = tuple(op.inputs.get("Cond", ()))
        self.scalar = bool(op.attrs.get("is_scalar_condition", False))
        self.dups = (("Cond", self.conds), ("Input", tuple(op.inputs.get("Input", ()))))

    def taken(self, env: dict) -> bool:
        if self.scalar:
            return truth(env[self.conds[0]], self.op, self.conds[0])
        return all(getattr(env[n], "size", 0) > 0 for n in self.conds)

    def run(self, env: dict, lods: dict | None = None) -> None:
        lods = {} if lods is None else lods
        if not self.taken(env):
            if self.scope is not None:
                env[self.scope] = []
            return
        check_inputs(self.sub, env, self.op)
        if self.scope is None:
            self.sub.run_block(env, lods)
            return
        step = snapshot(self.sub, env, lods)
        self.sub.run_block(env, lods)
        keep_locals(self.sub, env, lods, step)
        env[self.scope] = [step]


# the other host ops register themselves on import
from oar.executor import array_ops, control_flow_grad  # noqa: E402,F401
