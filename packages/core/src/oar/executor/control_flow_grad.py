"""Gradients through ``while`` and ``conditional_block``.

The grad maker builds a *grad block*: the grad ops of the forward body, in
reverse, made by a nested backward builder (``oar.backward``), and appends one
``while_grad`` / ``conditional_block_grad`` host op that runs it once per saved
forward pass, newest first (Fluid's step scopes: the forward op saved, per
pass, the outside values the body read and the body's own values).

Names of the outside variables' gradients inside the grad block:

- *carried* variables (read and written by the body, e.g. a loop state): the
  grad block reads the gradient w.r.t. the value after the pass (``@GRAD@IN``)
  and produces the one w.r.t. the value before it (``@GRAD@PRE``); the host op
  carries it to the next (earlier) pass;
- *read-only* variables (parameters, constants): each pass produces a piece
  (``@GRAD@STEP``) that the host op adds up;
- tensor arrays: their gradient array is shared by all passes, and grad ops add
  into it in place.
"""

from __future__ import annotations

from typing import Any

from oar.errors import OarError
from oar.executor.block_ops import HostCall, host_op, sub_plan
from oar.framework.dtypes import VarType
from oar.lod_tensor import LoDTensor, LoDTensorArray
from oar.registry import EMPTY_VAR, GradOpDesc

_FLOATS = ("float16", "float32", "float64")


def _float(block: Any, name: str) -> bool:
    v = block._find_var_recursive(name)
    return v is not None and v.dtype in _FLOATS and v.type != VarType.LOD_TENSOR_ARRAY


def _array(block: Any, name: str) -> bool:
    v = block._find_var_recursive(name)
    return v is not None and v.type == VarType.LOD_TENSOR_ARRAY


def _unique(block: Any, base: str) -> str:
    name, k = base, 1
    while block._find_var_recursive(name) is not None:
        name, k = f"{base}@{k}", k + 1
    return name


def _grad_block_maker(ctx: Any, op_type: str, in_slot: str, scopes_slot: str) -> list:
    from oar.backward import _GradBuilder, _needs_grad, _path_ops, current_grad_builder

    outer = current_grad_builder()
    if outer is None:
        raise OarError(f"the gradient of '{op_type}' must be built by append_backward", op=op_type)
    block = outer.block
    program = block.program
    fwd = program.block(int(ctx.attrs["sub_block"]))
    xs = ctx.input(in_slot)
    x_grads = dict(zip(xs, ctx.input_grad(in_slot)))
    outs = ctx.output("Out")
    out_grads = dict(zip(outs, ctx.output_grad("Out")))
    written = set(outs)
    cur = program.current_block_idx
    gblk = program._create_block(parent_idx=fwd.idx)
    program.current_block_idx = cur
    inner = _GradBuilder(gblk, outer.no_grad, outer.callbacks)
    carry, accumulate, arrays, keep = [], [], [], []
    seeds: list = []
    for v in dict.fromkeys(outs + xs):
        if _array(fwd, v):
            g = out_grads.get(v) or x_grads.get(v) or EMPTY_VAR
            if g == EMPTY_VAR:
                g = _unique(block, v + "@GRAD")
            if not block.has_var(g) and block._find_var_recursive(g) is None:
                inner._make_grad_var(v, g)
            inner._gnames[v] = g
            inner.pending[v] = [g]
            arrays.append(g)
            keep.append(g)
            seeds.append(v)
        elif v in written and _float(fwd, v):
            g_in = _unique(gblk, v + "@GRAD@IN")
            inner._make_grad_var(v, g_in)
            inner._gnames[v] = g_in
            inner.pending[v] = [g_in]
            seeds.append(v)
            carry.append([v, g_in, out_grads.get(v) or EMPTY_VAR, x_grads.get(v, EMPTY_VAR)])
            keep.append(g_in)
    reset = {c[0] for c in carry}

    def after_op(op: Any) -> None:
        # a carried variable written by this op: earlier reads get fresh gradient names
        for n in set(op.output_arg_names) & reset:
            inner.final.pop(n, None)
            inner.pending.pop(n, None)
            inner._gnames[n] = _unique(gblk, n + "@GRAD@PRE")

    ops = list(fwd.ops)
    needs = _needs_grad(fwd, ops, outer.no_grad, {x for x, g in x_grads.items() if g != EMPTY_VAR})
    needs |= set(seeds)
    inner.run(_path_ops(ops, set(seeds)), needs, after_op)
    for c in carry:
        pre = inner.finalize(c[0]) if c[0] in inner.pending else None
        c.append(pre or "")
        if pre:
            keep.append(pre)
    for x in xs:
        g = x_grads.get(x, EMPTY_VAR)
        if g == EMPTY_VAR or x in written or _array(fwd, x):
            continue
        step = inner.finalize(x) if x in inner.pending else None
        if step is not None:
            accumulate.append([x, step, g])
            keep.append(step)
        else:
            accumulate.append([x, "", g])
    scopes = ctx.output(scopes_slot)
    if not scopes or scopes[0] == EMPTY_VAR:
        raise OarError(f"'{op_type}' saved no step scopes for its gradient", op=op_type)
    grad_outs = [g for g in ctx.input_grad(in_slot)]
    return [
        GradOpDesc(
            op_type + "_grad",
            {
                "X": xs,
                "Out@GRAD": [g for g in ctx.output_grad("Out") if g != EMPTY_VAR],
                "StepScopes": scopes,
            },
            {"X@GRAD": grad_outs},
            {
                "sub_block": gblk.idx,
                "carry": [list(c) for c in carry],
                "accumulate": accumulate,
                "arrays": arrays,
                "keep": sorted(set(keep)),
            },
        )
    ]


def while_grad_maker(ctx: Any) -> list:
    return _grad_block_maker(ctx, "while", "X", "StepScopes")


def conditional_block_grad_maker(ctx: Any) -> list:
    return _grad_block_maker(ctx, "conditional_block", "Input", "Scope")


def _plain(v: Any) -> Any:
    return v._array if isinstance(v, LoDTensor) else v


@host_op("while_grad")
@host_op("conditional_block_grad")
class GradBlockCall(HostCall):
    """Run the grad block once per saved forward pass, newest first (see module doc)."""

    def __init__(self, plan: Any, op: Any) -> None:
        self.op = op
        a = op.attrs
        self.sub = sub_plan(plan, op, keep_names=tuple(a.get("keep", ())))
        self.takes_lod = self.sub.has_lod_ops
        self.scopes = op.inputs["StepScopes"][0]
        # gradient outputs are read from the op (the backward may rename them after the maker)
        xg = dict(zip(op.inputs.get("X", ()), op.outputs.get("X@GRAD", ())))
        self.carry = [
            (v, gi, go, xg.get(v, EMPTY_VAR), pre) for v, gi, go, _gx, pre in a.get("carry", ())
        ]
        self.accumulate = [
            (x, step, xg.get(x, EMPTY_VAR)) for x, step, _g in a.get("accumulate", ())
        ]
        self.arrays = tuple(a.get("arrays", ()))
        self.dups = (("X", tuple(op.inputs.get("X", ()))),)
        self.zeros_like = plan.device.xp.zeros_like  # the device's arrays (numpy, cupy)

    def run(self, env: dict, lods: dict | None = None) -> None:
        lods = {} if lods is None else lods
        steps = env.get(self.scopes) or []
        for g in self.arrays:
            if env.get(g) is None:
                env[g] = LoDTensorArray()
        carried = {v: (_plain(env.get(g_out)) if g_out != EMPTY_VAR else None)
                   for v, _gi, g_out, _gx, _pre in self.carry}  # fmt: skip
        sums: dict = {}
        for values, step_lods in reversed(steps):
            hidden = {n: env[n] for n in values if n in env}
            env.update(values)
            lods.update(step_lods)
            for v, g_in, _g_out, _gx, _pre in self.carry:
                g = carried[v]
                env[g_in] = self.zeros_like(_plain(values.get(v, env.get(v)))) if g is None else g
            try:
                self.sub.run_block(env, lods)
            finally:
                for v, g_in, _g_out, _gx, pre in self.carry:
                    env.pop(g_in, None)
                    carried[v] = _plain(env.pop(pre, None)) if pre else None
                for x, step, _g in self.accumulate:
                    if step:
                        g = _plain(env.pop(step, None))
                        if g is not None:
                            sums[x] = g if x not in sums else sums[x] + g
                for n in values:
                    env.pop(n, None)
                    lods.pop(n, None)
                env.update(hidden)
        for v, _g_in, _g_out, g_x, _pre in self.carry:
            if g_x != EMPTY_VAR:
                g = carried[v]
                env[g_x] = self.zeros_like(_plain(env[v])) if g is None else g
        for x, _step, g_x in self.accumulate:
            if g_x == EMPTY_VAR:
                continue
            env[g_x] = sums[x] if x in sums else self.zeros_like(_plain(env[x]))
