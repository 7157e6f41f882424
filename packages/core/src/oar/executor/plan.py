"""Compiling a program block into a flat, cached plan of kernel calls.

Everything that does not change between runs is resolved once here: the
kernel of each op, its slot names and attrs, which variables come from the
scope, and after which op each temporary dies (or, when later readers need
only its shape, is swapped for a stand-in). :meth:`Plan.run` then runs
generated straight-line code (``stepgen``) with one dict of values for the
whole run, or, when LoD is involved, a flat loop over the step tuples.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from oar.errors import (
    KernelNotFoundError,
    OarError,
    OpRuntimeError,
    UninitializedVariableError,
    describe_var,
)
from oar.executor.block_ops import HOST_OPS
from oar.executor.stepgen import (
    MIN_DONATED_BYTES,
    GenStep,
    StepFailed,
    make_loop_fn,
    make_run_fns,
    make_step_fn,
    shape_stand_in,
)
from oar.framework.dtypes import VarType
from oar.fusion import fuse_steps
from oar.install_hints import kernel_not_found_message
from oar.kernel_entry import EMPTY_VAR, KernelCall, KernelEntry
from oar.lod_tensor import LoDTensor, LoDTensorArray, SelectedRows
from oar.user_array import user_array


class Step(NamedTuple):
    """One op of a plan: its kernel call, the op (for errors), and what happens around the call."""

    call: KernelCall
    op: Any
    lod_pairs: tuple  # (input var, output var) whose LoD passes on (the op's share_lod)
    frees: tuple = ()  # temporaries that die after this op
    shrink: tuple = ()  # arrays later read only for their shape: swapped for stand-ins


class Plan:
    """A compiled (program block, feeds, fetches, device) ready to run many times."""

    checks_nan_inf = False  # see executor/checked_plan.py (FLAGS_check_nan_inf)
    profiled = False  # see executor/profiled_plan.py (fluid.profiler)
    fuses = True  # chains of ops may run as one fused kernel (oar.fusion)

    def __init__(
        self,
        program: Any,
        feed_names: tuple,
        fetch_names: tuple,
        device: Any,
        block_idx: int = 0,
        keep_locals: bool = False,
        keep_names: tuple = (),
    ) -> None:
        from oar.plugins import registries

        reg = registries()
        self.program = program
        self.version = program._version
        self.device = device
        self.device_id = 0  # the executor's place's
        self.on_device = device.name != "cpu"  # host arrays in the scope move there
        self.block = program.block(block_idx)
        self.feed_names = feed_names
        self.fetch_names = fetch_names
        block = self.block
        produced: set = set()
        scope_inputs: list = []
        seen_scope: set = set()
        last_use: dict = {}
        shape_use: dict = {}  # reads by no_need_buffer slots: they need the shape, not the data
        steps: list = []
        persistable = {n for n, v in self._all_vars().items() if v.persistable}
        pairs = [(op, self._compile_op(op, reg.ops.get(op.type), reg)) for op in block.ops]
        if self.fuses and not block_idx:  # a sub-block's values may be kept for its parent
            keep = set(fetch_names) | set(feed_names) | persistable
            fusions = reg.fusions.for_device(device.name)
            pairs = fuse_steps(pairs, fusions, block, keep, self._fused_step)
        ops = [op for op, _ in pairs]
        for i, (op, step) in enumerate(pairs):
            shape_only = step.call.shape_only_names()
            for n in op.input_arg_names:
                if n not in produced and n not in feed_names and n not in seen_scope:
                    seen_scope.add(n)
                    scope_inputs.append(n)
                if n in shape_only:
                    shape_use[n] = i
                else:
                    last_use[n] = i
            for n in op.output_arg_names:
                produced.add(n)
                last_use[n] = i
            steps.append(step)
        self.scope_inputs = tuple(scope_inputs)
        # a fed array that an op writes (in place, like sgd's ParamOut) is copied first:
        # feeding never changes the caller's array, as in Fluid
        self.copy_feeds = tuple(n for n in feed_names if n in produced)
        keep = set(fetch_names) | persistable
        # a sub-block (block_idx > 0) runs inside its parent's run: values of the enclosing
        # blocks live on after it, only its own variables die (or are kept for the backward)
        self.outer_inputs = self.scope_inputs if block_idx else ()
        self.local_names = (
            tuple(sorted(n for n in produced if n in block.vars)) if block_idx else ()
        )
        if block_idx:
            keep |= {n for n in produced | set(last_use) if n not in block.vars}
            if keep_locals:
                keep |= set(self.local_names)
            keep |= set(keep_names)
        frees: dict = {}
        shrinks: dict = {}
        for n in set(last_use) | set(shape_use):
            if n in keep or n in feed_names:
                continue
            real, shape = last_use.get(n, -1), shape_use.get(n, -1)
            if shape > real >= 0 and not _known_small(block, n):
                # later readers want only its shape: swap the array for a stand-in
                shrinks.setdefault(real, []).append(n)
            frees.setdefault(max(real, shape), []).append(n)
        for i, names in frees.items():
            steps[i] = steps[i]._replace(frees=tuple(sorted(names)))
        for i, names in shrinks.items():
            steps[i] = steps[i]._replace(shrink=tuple(sorted(names)))
        self.free_after = {ops[i].type + f"#{i}": tuple(sorted(v)) for i, v in frees.items()}
        self.steps = steps
        # persistables written by ops go back to the scope after the run
        self.write_back = tuple(sorted(n for n in produced if n in persistable))
        self.fetch_from_scope = tuple(
            n for n in fetch_names if n not in produced and n not in feed_names
        )
        self.persistable = persistable
        # LoD kernels need the generic loop (LoD wrapping and propagation)
        self.has_lod_ops = any(s.call.takes_lod for s in self.steps)
        # runs without LoD go through generated straight-line code (see stepgen)
        self.run_fns = make_run_fns([_gen_step(s, block) for s in self.steps])

    def loop_fn(self, cond: str) -> Callable:
        """This (sub-block) plan as the body of one generated While loop on ``cond``
        (``stepgen.make_loop_fn``)."""
        return make_loop_fn([_gen_step(s, self.block) for s in self.steps], cond)

    def program_readers(self, name: str) -> list:
        """The ops of any block of the program that read ``name``."""
        return [op for b in self.program.blocks for op in b.ops if name in op.input_arg_names]

    def run_block(self, env: dict, lods: dict) -> None:
        """Run a sub-block's steps against its enclosing run's values (see ``block_ops``)."""
        if self.has_lod_ops or lods:
            self._run_generic(env, lods)
            return
        failed = None
        try:
            for run_fn in self.run_fns:
                run_fn(env)
        except StepFailed as exc:
            failed = exc
        if failed is not None:
            self._raise_step_error(failed.__cause__, self.steps[failed.index], env)

    def _all_vars(self) -> dict:
        out: dict = {}
        for b in self.program.blocks:
            out.update(b.vars)
        return out

    # --- compiling one op ------------------------------------------------------------------------
    def _kernel_dtype(self, op, opdef) -> str | None:
        kd = opdef.kernel_dtype
        if kd is not None and kd.startswith("attr:"):
            return op.attrs.get(kd[5:])
        slots = [kd] if kd else list(op.inputs)
        for slot in slots:
            for n in op.inputs.get(slot, ()):
                v = self.block._find_var_recursive(n)
                if v is not None and v.dtype is not None:
                    return v.dtype
        return op.attrs.get("dtype") if isinstance(op.attrs.get("dtype"), str) else "float32"

    def _compile_op(self, op, opdef, reg) -> Step:
        host = HOST_OPS.get(op.type)
        if host is not None:
            return Step(host(self, op), op, ())
        dtype = self._kernel_dtype(op, opdef)
        entry = reg.kernels.lookup(op.type, self.device.name, dtype)
        if entry is None:
            raise KernelNotFoundError(
                kernel_not_found_message(reg, op.type, self.device.name, dtype),
                callsite=op.callsite,
                created=True,
            )
        singles = []
        dups = []
        for s in opdef.inputs:
            names = [n for n in op.inputs.get(s.name, ()) if n != EMPTY_VAR]
            if not names:
                continue
            if s.duplicable:
                dups.append((s.name, tuple(names)))
            else:
                singles.append((s.name, names[0]))
        outs = []
        for s in opdef.outputs:
            names = op.outputs.get(s.name, ())
            if not names or all(n == EMPTY_VAR for n in names):
                continue
            outs.append((s.name, tuple(names) if s.duplicable else names[0], s.duplicable))
        lod_pairs = []
        for src, dst in opdef.share_lod:
            for a in op.inputs.get(src, ())[:1]:
                for b in op.outputs.get(dst, ())[:1]:
                    lod_pairs.append((a, b))
        sparse = tuple(
            n
            for _, n in singles
            if (v := self.block._find_var_recursive(n)) is not None
            and v.type == VarType.SELECTED_ROWS
        )
        below = entry.small_below(reg.kernels, dtype)  # small calls go straight to it
        call = entry.compile_call(
            dict(op.attrs), tuple(singles), tuple(dups), tuple(outs), sparse, below
        )
        return Step(call, op, tuple(lod_pairs))

    def _fused_step(self, fop, kernel, steps: list) -> Step:
        """The step of a fused chain (``fop``: an :class:`oar.fusion.FusedOp`)."""
        chain = [s.call.entry for s in steps]
        entry = KernelEntry.for_chain(
            fop.type, self.device.name, kernel, fop.fusion, chain, fop.inputs
        )
        singles = tuple((slot, names[0]) for slot, names in fop.inputs.items())
        outs = tuple((slot, names[0], False) for slot, names in fop.outputs.items())
        call = entry.compile_call(fop.attrs, singles, (), outs)
        # LoD passes through the chain in order (x -> sum -> activation)
        return Step(call, fop, tuple(p for s in steps for p in s.lod_pairs))

    # --- running ---------------------------------------------------------------------------------
    def run(self, feeds: dict, feed_lods: dict, scope: Any, return_numpy: bool) -> list:
        env = dict(feeds)
        for name in self.copy_feeds:
            env[name] = env[name].copy()
        lods = dict(feed_lods)
        for name in self.scope_inputs:
            sv = scope.find_var(name)
            value = None if sv is None else sv.value
            if isinstance(value, LoDTensor):
                if value._lod:
                    lods[name] = value._lod
                value = value._array
            if value is None:
                raise self._uninitialized(name)
            if self.on_device and value.__class__ is np.ndarray:
                value = self._to_device(sv, value)
            env[name] = value
        if self.has_lod_ops or lods:
            self._run_generic(env, lods)
        else:
            failed = None
            try:
                for run_fn in self.run_fns:
                    run_fn(env)
            except StepFailed as exc:
                failed = exc
            if failed is not None:  # raised outside the handler: no StepFailed in the chain
                self._raise_step_error(failed.__cause__, self.steps[failed.index], env)
        for name in self.write_back:
            value = env.get(name)
            if value is None:
                continue
            sv = scope.var(name)
            cur = sv.value
            if isinstance(value, SelectedRows):
                sv.value = value
            elif isinstance(cur, LoDTensor):
                if cur._array is not value:
                    cur._array = value
                if name in lods:
                    cur._lod = lods[name]
            else:
                sv.value = LoDTensor(value, lods.get(name))
        return self._fetch(env, lods, scope, return_numpy)

    def _to_device(self, sv: Any, value: np.ndarray) -> Any:
        """A host array in the scope (set by the user, or made by a CPU executor) moves to this
        plan's device once, as Fluid copies a tensor to the place of the op that reads it."""
        moved = self.device.from_host(value, self.device_id)
        if isinstance(sv.value, LoDTensor):
            sv.value._array = moved
        else:
            sv.value = moved
        return moved

    def _run_generic(self, env: dict, lods: dict) -> None:
        """The general loop: LoD wrapping, unwrapping and propagation for every op."""
        step = None
        try:
            for step in self.steps:
                step.call.run(env, lods)
                _share_lod(step, lods)
                for n in step.frees:
                    env.pop(n, None)
                for n in step.shrink:
                    v = env.get(n)
                    if type(v) is np.ndarray and v.nbytes >= MIN_DONATED_BYTES:
                        env[n] = shape_stand_in(v)
        except OarError as exc:
            new = self._with_callsite(exc, step)
            if new is exc:
                raise
            raise new from exc
        except Exception as exc:
            raise self._kernel_failure(step, env, exc) from exc

    @functools.cached_property
    def step_fns(self) -> tuple:
        """One generated function per op (the fused ``run_fns`` do the same work); for tests and tools."""
        return tuple(make_step_fn(*_gen_step(s, self.block)) for s in self.steps)

    def _raise_step_error(self, exc: Exception, step: Any, env: dict) -> None:
        if isinstance(exc, OarError):
            new = self._with_callsite(exc, step)
            if new is exc:
                raise exc
            raise new from exc
        raise self._kernel_failure(step, env, exc) from exc

    @staticmethod
    def _with_callsite(exc: OarError, step: Any) -> OarError:
        """The error with its op's creation site, unless it already names a site (fields)."""
        if step is not None and not _is_eof(exc) and exc.callsite is None:
            exc.with_context(callsite=step.op.callsite, created=True)
            _name_input(exc, step.op)
        return exc

    def _fetch(self, env, lods, scope, return_numpy) -> list:
        results = []
        for name in self.fetch_names:
            if name in env:
                value = env[name]
            else:
                sv = scope.find_var(name)
                value = None if sv is None else sv.value
                if isinstance(value, LoDTensor):
                    if value._lod:
                        lods[name] = value._lod
                    value = value._array
                if value is None:
                    raise self._uninitialized(name)
            if isinstance(value, SelectedRows):
                results.append(value if not return_numpy else user_array(value.to_dense()))
                continue
            if isinstance(value, list):  # a tensor array: its items, as Fluid fetches them
                results.append(_fetch_array(value, return_numpy))
                continue
            value = self.device.to_host(value) if self.device.name != "cpu" else value
            if isinstance(value, np.ndarray) and (
                name in self.persistable or value.base is not None
            ):
                value = value.copy()
            if return_numpy:
                results.append(user_array(value))  # size-1: float(loss) on NumPy 2 too
            else:
                results.append(LoDTensor(value, lods.get(name)))
        return results

    def _uninitialized(self, name: str) -> Exception:
        var = self.block._find_var_recursive(name)
        readers = [op for op in self.block.ops if name in op.input_arg_names]
        at = {"callsite": readers[0].callsite if readers else None, "created": True}
        first = f"op '{readers[0].type}'" if readers else "the program"
        if var is not None and var.is_data:
            return UninitializedVariableError(
                f"{first} reads data variable {describe_var(name, var)} but it was not fed: "
                f"pass it in exe.run(feed={{'{name}': ...}})",
                **at,
            )
        if var is not None and var.persistable:
            return UninitializedVariableError(
                f"{first} reads {describe_var(name, var)}, which holds no value in the scope: run the "
                f"startup program first (exe.run(fluid.default_startup_program())), or load it",
                **at,
            )
        return UninitializedVariableError(
            f"{first} reads variable '{name}', which no earlier op writes, no feed gives and the scope "
            f"does not hold",
            **at,
        )

    def _kernel_failure(self, step, env, exc) -> Exception:
        if step is None:
            return exc
        op = step.op

        def shape(n: str) -> str:
            v = env.get(n)
            if isinstance(v, list):
                return f"(array of {len(v)})"
            return str(list(np.shape(v))) if v is not None and hasattr(v, "shape") else ""

        parts = [f"{s}={n}{shape(n)}" for s, n in step.call.singles]
        parts += [
            f"{s}=[" + ", ".join(f"{n}{shape(n)}" for n in ns) + "]" for s, ns in step.call.dups
        ]
        shapes = ", ".join(parts)
        return OpRuntimeError(
            f"op '{op.type}' failed on {self.device.name}: {type(exc).__name__}: {exc}; inputs: {shapes}",
            callsite=op.callsite,
            created=True,
        )


def _name_input(exc: OarError, op: Any) -> None:
    """A kernel's error about "input X" names the variable fed to slot X as well."""
    if exc.variable is not None or not exc.args or not isinstance(exc.args[0], str):
        return
    msg = exc.args[0]
    for slot, names in op.inputs.items():
        if len(names) == 1 and f"input {slot} " in msg:
            exc.variable = names[0]
            exc.args = (msg.replace(f"input {slot} ", f"input {slot} ('{names[0]}') ", 1),)
            return


def _fetch_array(value: list, return_numpy: bool) -> list:
    items = [v if isinstance(v, LoDTensor) or v is None else LoDTensor(v) for v in value]
    if not return_numpy:
        return LoDTensorArray(items)
    return [None if v is None else user_array(np.array(v._array)) for v in items]


def _gen_step(s: Step, block: Any) -> GenStep:
    """``stepgen``'s view of a compiled step."""
    return GenStep(s.call, s.frees, _donatable(s, block), s.shrink)


def _donatable(step: Step, block: Any = None) -> tuple:
    """Input slots of an in-place kernel whose variable dies at this op.

    Frees never hold fed, fetched or persistable names. A name read twice by the
    op, or also written by it, is not offered (the kernel entry decides), nor one
    whose declared shape is fully known and too small to be worth it. Whether the
    array is really unshared is checked at run time (stepgen).
    """
    dying = set(step.frees) | set(step.shrink)
    op = step.op
    slots = step.call.donation_candidates(dying, op.input_arg_names, set(op.output_arg_names))
    names = dict(step.call.singles)
    return tuple(s for s in slots if not _known_small(block, names[s]))


def _known_small(block: Any, name: str) -> bool:
    var = block._find_var_recursive(name) if block is not None else None
    shape = getattr(var, "shape", None)
    if shape is None or any(d is None or d < 0 for d in shape):
        return False
    try:
        itemsize = np.dtype(var.dtype).itemsize
    except TypeError:
        return False
    return math.prod(shape) * itemsize < MIN_DONATED_BYTES


def _is_eof(exc: Exception) -> bool:
    from oar.errors import EOFException

    return isinstance(exc, EOFException)


def _share_lod(step: Step, lods: dict) -> None:
    """Pass LoD along the op's share_lod pairs. A LoD kernel set its outputs' LoD itself;
    for any other, the output's LoD is its source's now, even when the output held another
    LoD before (a loop body's variables keep the previous iteration's)."""
    takes_lod = getattr(step.call, "takes_lod", True)
    for a, b in step.lod_pairs:
        if a in lods:
            if b not in lods or not takes_lod:
                lods[b] = lods[a]
        elif not takes_lod and b != a:
            lods.pop(b, None)
