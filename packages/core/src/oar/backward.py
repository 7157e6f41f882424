"""Reverse-mode autodiff over a program: ``append_backward`` and ``gradients``.

Grad ops come from each op definition's grad maker (the same makers dygraph
replays). Gradients of a variable used more than once are summed; variables
with ``stop_gradient`` or in ``no_grad_set`` get none, and neither do values
that no trainable parameter (or requested input) influences.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from oar.errors import OarError
from oar.framework.dtypes import VarType
from oar.framework.operator import OpRole
from oar.framework.variable import Parameter, Variable
from oar.registry import EMPTY_VAR, GRAD_SUFFIX, GradContext


def grad_var_name(name: str) -> str:
    return name + GRAD_SUFFIX


def _names(items: Iterable | None) -> set:
    out = set()
    for x in items or ():
        out.add(x if isinstance(x, str) else x.name)
    return out


_CURRENT: contextvars.ContextVar = contextvars.ContextVar("oar_grad_builder", default=None)


def current_grad_builder() -> Any:
    """The backward builder whose sweep is running (grad makers of sub-block ops build a
    nested grad block with it); None outside ``append_backward`` / ``gradients``."""
    return _CURRENT.get()


class _GradBuilder:
    def __init__(self, block: Any, no_grad: set, callbacks: Sequence[Callable] | None) -> None:
        from oar.plugins import registries

        self.block = block
        self.ops_reg = registries().ops
        self.no_grad = no_grad
        self.callbacks = list(callbacks or ())
        self.pending: dict = {}  # var -> [piece names]
        self.piece_op: dict = {}  # piece name -> grad op that writes it
        self.final: dict = {}  # var -> finished grad name
        self._gnames: dict = {}  # var -> this pass's grad name

    # --- grad variables -----------------------------------------------------------------------
    def gname(self, var: str) -> str:
        """``var@GRAD``, or ``var@GRAD@<k>`` when an earlier backward pass already used that name
        (so a second ``fluid.gradients`` call does not overwrite the first one's results)."""
        name = self._gnames.get(var)
        if name is None:
            name = grad_var_name(var)
            k = 1
            while self.block._find_var_recursive(name) is not None:
                name = f"{grad_var_name(var)}@{k}"
                k += 1
            self._gnames[var] = name
        return name

    def _make_grad_var(self, fwd_name: str, grad_name: str) -> Variable:
        fwd = self.block._var_recursive(fwd_name)
        if grad_name in self.block.vars:
            return self.block.vars[grad_name]
        return self.block.create_var(
            name=grad_name,
            shape=fwd.shape,
            dtype=fwd.dtype,
            lod_level=fwd.lod_level,
            stop_gradient=True,
            type=VarType.LOD_TENSOR_ARRAY if _is_array(fwd) else VarType.LOD_TENSOR,
        )

    def new_piece(self, var: str) -> str:
        pieces = self.pending.setdefault(var, [])
        if pieces and _is_array(self.block._find_var_recursive(var)):
            return pieces[0]  # gradients add into a tensor array's gradient in place
        name = self.gname(var) if not pieces else f"{self.gname(var)}@RENAME@{len(pieces)}"
        pieces.append(name)
        self._make_grad_var(var, name)
        return name

    def finalize(self, var: str) -> str | None:
        """The single gradient of ``var``, summing its pieces if several ops contributed."""
        if var in self.final:
            return self.final[var]
        pieces = self.pending.pop(var, None)
        if not pieces:
            return None
        target = self.gname(var)
        if len(pieces) == 1 and pieces[0] != target:  # the first piece was dropped by its maker
            self.final[var] = pieces[0]
            return pieces[0]
        if len(pieces) > 1:
            first = f"{target}@RENAME@0"
            op = self.piece_op.get(target)
            if op is not None:
                op._rename_output(target, first)
                old = self.block.vars.pop(target)
                old.name = first
                self.block.vars[first] = old
            pieces = [first] + pieces[1:]
            gvar = self._make_grad_var(var, target)
            if any(self.block.vars[p].type == "selected_rows" for p in pieces) and all(
                self.block.vars[p].type == "selected_rows" for p in pieces
            ):
                gvar.type = "selected_rows"
            self._append("sum", {"X": pieces}, {"Out": [target]}, {})
        self.final[var] = target
        return target

    def _append(self, type_: str, inputs: dict, outputs: dict, attrs: dict, callsite=None) -> Any:
        # grad makers copy the forward op's attrs: the grad op's role must be the current (backward) one
        attrs = {**attrs, "op_role": self.block.program._current_role}
        op = self.block.append_op(type_, inputs, outputs, attrs, infer=False, callsite=callsite)
        opdef = self.ops_reg.get(type_)
        hook = getattr(opdef, "infer_var_type", None)
        if hook is not None:
            for name, vtype in (hook(op.inputs, op.outputs, op.attrs) or {}).items():
                v = self.block._find_var_recursive(name)
                if v is not None:
                    v.type = vtype
        for cb in self.callbacks:
            cb(block=self.block, context={"op": op})
        return op

    # --- the sweep ------------------------------------------------------------------------------
    def run(self, ops: list, needs: set, after_op: Callable | None = None) -> None:
        """The reverse sweep over ``ops``; ``after_op(op)`` is called after each op's turn
        (a grad block uses it to rename the gradient of a variable the op overwrote)."""
        token = _CURRENT.set(self)
        try:
            for op in reversed(ops):
                self._visit(op, needs)
                if after_op is not None:
                    after_op(op)
        finally:
            _CURRENT.reset(token)

    def _visit(self, op: Any, needs: set) -> None:
        opdef = self.ops_reg.get(op.type)
        out_grads: dict = {}
        any_grad = False
        for slot, names in op.outputs.items():
            gs = []
            for n in names:
                g = self.finalize(n) if n != EMPTY_VAR else None
                if g is not None:
                    any_grad = True
                gs.append(g)
            out_grads[slot] = gs
        if not any_grad:
            return
        in_grads: dict = {}
        wants = False
        for slot, names in op.inputs.items():
            gs = []
            for n in names:
                if n in needs and n not in self.no_grad:
                    gs.append(self.new_piece(n))
                    wants = True
                else:
                    gs.append(EMPTY_VAR)
            in_grads[slot] = gs
        if not wants:
            return
        if opdef.grad is None:
            raise OarError(
                f"op '{op.type}' has no gradient, but its inputs "
                f"{[n for ns in op.inputs.values() for n in ns if n in needs]} need one for the loss; "
                f"set stop_gradient=True on them or use an op with a gradient",
                callsite=op.callsite,
                created=True,
            )
        for slot, gs in out_grads.items():  # outputs off the loss path get zero gradients
            for i, g in enumerate(gs):
                if g is None:
                    n = op.outputs[slot][i]
                    var = self.block._find_var_recursive(n)
                    if (
                        n == EMPTY_VAR
                        or var is None
                        or var.dtype not in ("float16", "float32", "float64")
                        or _is_array(var)
                    ):
                        gs[i] = EMPTY_VAR
                        continue
                    z = self.gname(n) + "@ZERO"
                    self._make_grad_var(n, z)
                    self._append("fill_zeros_like", {"X": [n]}, {"Out": [z]}, {})
                    gs[i] = z
        ctx = GradContext(op.type, op.inputs, op.outputs, op.attrs, in_grads, out_grads)
        for desc in opdef.grad(ctx):
            for names in desc.outputs.values():
                for n in names:
                    if n != EMPTY_VAR and not self.block.has_var(n):
                        self.block.create_var(name=n, stop_gradient=True)
            gop = self._append(
                desc.type,
                dict(desc.inputs),
                dict(desc.outputs),
                dict(desc.attrs),
                callsite=op.callsite,
            )
            for n in gop.output_arg_names:
                self.piece_op[n] = gop
        # pieces the maker chose not to write are dropped
        for slot, gs in in_grads.items():
            for n, g in zip(op.inputs[slot], gs):
                if g != EMPTY_VAR and g not in self.piece_op:
                    self.pending[n].remove(g)


def _is_array(var: Any) -> bool:
    return getattr(var, "type", None) == VarType.LOD_TENSOR_ARRAY


def _needs_grad(block: Any, ops: list, no_grad: set, extra_leaves: set) -> set:
    produced = {n for op in ops for n in op.output_arg_names}
    needs = set(extra_leaves)
    for v in block.program.list_vars():
        if v.name in produced or v.name in no_grad or v.stop_gradient:
            continue
        if isinstance(v, Parameter) and not v.trainable:
            continue
        needs.add(v.name)
    for op in ops:
        if any(n in needs for n in op.input_arg_names):
            for n in op.output_arg_names:
                var = block._find_var_recursive(n)
                if n in no_grad or (var is not None and var.stop_gradient):
                    continue
                needs.add(n)
    return needs


def _path_ops(ops: list, targets: set) -> list:
    wanted = set(targets)
    path = []
    for op in reversed(ops):
        if wanted.intersection(op.output_arg_names):
            path.append(op)
            wanted.update(op.input_arg_names)
    path.reverse()
    return path


def _build(
    targets: list, target_grads: list | None, no_grad_set: Any, callbacks: Any, extra_leaves: set
) -> tuple:
    block = targets[0].block.program.global_block()
    program = block.program
    no_grad = _names(no_grad_set)
    ops = list(block.ops)
    with program._role_guard(OpRole.Backward):
        needs = _needs_grad(block, ops, no_grad, extra_leaves)
        builder = _GradBuilder(block, no_grad, callbacks)
        for i, t in enumerate(targets):
            g = target_grads[i] if target_grads else None
            name = builder.new_piece(t.name)
            if g is not None:
                builder._append("scale", {"X": [g.name]}, {"Out": [name]}, {"scale": 1.0})
            elif t.shape and all(d >= 0 for d in t.shape):
                with program._role_guard(OpRole.Backward | OpRole.Loss):
                    builder._append(
                        "fill_constant",
                        {},
                        {"Out": [name]},
                        {"shape": list(t.shape), "dtype": t.dtype, "value": 1.0},
                    )
            else:
                with program._role_guard(OpRole.Backward | OpRole.Loss):
                    builder._append(
                        "fill_any_like", {"X": [t.name]}, {"Out": [name]}, {"value": 1.0}
                    )
            builder.piece_op[name] = block.ops[-1]
        path = _path_ops(ops, {t.name for t in targets})
        builder.run(path, needs)
        for var in list(builder.pending):
            builder.finalize(var)
    return builder


def append_backward(
    loss: Variable,
    parameter_list: Sequence | None = None,
    no_grad_set: Any = None,
    callbacks: Sequence[Callable] | None = None,
    checkpoints: Any = None,
) -> list:
    """Append grad ops for ``loss``; returns ``[(parameter, gradient), ...]``.

    ``parameter_list`` (names or Parameters) restricts which parameters are
    returned; by default every trainable parameter that received a gradient.
    """
    if not isinstance(loss, Variable):
        raise TypeError(f"append_backward: loss must be a Variable, given {type(loss).__name__}")
    builder = _build([loss], None, no_grad_set, callbacks, set())
    block = loss.block.program.global_block()
    if parameter_list is not None:
        params = [block._var_recursive(p if isinstance(p, str) else p.name) for p in parameter_list]
    else:
        params = [p for p in loss.block.program.all_parameters() if p.trainable]
    out = []
    for p in params:
        g = builder.final.get(p.name)
        if g is not None:
            out.append((p, block.var(g)))
    return out


def gradients(
    targets: Any, inputs: Any, target_gradients: Any = None, no_grad_set: Any = None
) -> list:
    """Gradients of the sum of ``targets`` w.r.t. each of ``inputs`` (None where unrelated)."""
    targets = targets if isinstance(targets, (list, tuple)) else [targets]
    inputs = inputs if isinstance(inputs, (list, tuple)) else [inputs]
    if target_gradients is not None and not isinstance(target_gradients, (list, tuple)):
        target_gradients = [target_gradients]
    if target_gradients is not None and len(target_gradients) != len(targets):
        raise ValueError(
            f"gradients: {len(target_gradients)} target_gradients given for {len(targets)} targets"
        )
    builder = _build(list(targets), target_gradients, no_grad_set, None, {v.name for v in inputs})
    block = targets[0].block.program.global_block()
    return [block.var(builder.final[v.name]) if v.name in builder.final else None for v in inputs]


calc_gradient = gradients
