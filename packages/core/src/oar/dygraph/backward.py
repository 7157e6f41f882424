"""Reverse sweep over the eager tape, replaying the registered grad makers.

For each recorded node (newest first) the grad maker sees a
:class:`oar.registry.GradContext` whose names are local aliases of the node's
variables; the grad ops it returns run at once through the same kernels the
static executor uses. Gradients of a variable used more than once are summed;
variables with ``stop_gradient`` get none.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from oar.errors import OarError
from oar.lod_tensor import LoDTensor, SelectedRows
from oar.registry import EMPTY_VAR, GRAD_SUFFIX, GradContext


def tape_fuser(tracer: Any) -> Any:
    from oar.dygraph.tape_fusion import tape_fuser as get

    return get(tracer)


def _collect(loss: Any) -> list:
    seen: dict = {}
    stack = [loss._node]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        if node.inputs is None:
            raise OarError(
                f"backward: the graph of '{loss.name}' was released by an earlier backward (op "
                f"'{node.type}'); pass retain_graph=True to the first backward() to run it twice"
            )
        seen[id(node)] = node
        for vs in node.inputs.values():
            for v in vs:
                if v._node is not None and not v.stop_gradient:
                    stack.append(v._node)
    return list(seen.values())


def _add(a: Any, b: Any) -> Any:
    """Sum two gradient pieces without writing into either (kernels may return shared views)."""
    if a is None:
        return b
    if isinstance(a, SelectedRows) and isinstance(b, SelectedRows):
        rows = list(a.rows()) + list(b.rows())
        return SelectedRows(
            rows,
            a.height(),
            np.concatenate([a.value, b.value]),  # cupy's too (NEP 18)
        )
    if isinstance(a, SelectedRows):
        a = a.to_dense()
    if isinstance(b, SelectedRows):
        b = b.to_dense()
    return a + b


def _check_loss(loss: Any) -> None:
    if loss.stop_gradient:
        raise OarError(
            f"backward: variable '{loss.name}' has stop_gradient=True, so no gradient flows from it; "
            f"it was computed only from data or under no_grad (set stop_gradient=False on an input "
            f"or parameter it depends on)"
        )
    if loss._value is None:
        raise OarError(f"backward: variable '{loss.name}' holds no value")
    if loss.numel() != 1:
        raise OarError(
            f"backward: variable '{loss.name}' has shape {loss.shape}; backward needs a scalar "
            f"(one element) loss: reduce it first, e.g. fluid.layers.mean(x)"
        )


def run_backward(tracer: Any, loss: Any, retain_graph: bool = False) -> None:
    """Fill ``.gradient()`` of everything ``loss`` depends on that does not stop gradients."""
    _check_loss(loss)
    accumulate(sweep(tracer, [(loss, ones_like(tracer, loss._value))], retain_graph))


def ones_like(tracer: Any, value: Any) -> Any:
    """The seed gradient of ``value``, on the tracer's device."""
    if isinstance(value, LoDTensor):
        value = value._array
    return np.ones_like(np.asarray(value)) if tracer.device == "cpu" else tracer.xp.ones_like(value)


def sweep(tracer: Any, roots: list, retain_graph: bool = False) -> dict:
    """Gradients of ``sum(root * seed)`` over ``roots = [(var, seed array)]``: ``{id: [var, grad]}``."""
    grads: dict = {}
    nodes: dict = {}
    for var, seed in roots:
        entry = grads.get(id(var))
        if entry is None:
            grads[id(var)] = [var, seed]
        else:
            entry[1] = _add(entry[1], seed)
        for n in _collect(var):
            nodes[id(n)] = n
    order = sorted(nodes.values(), key=lambda n: -n.seq)
    fuser = tape_fuser(tracer)
    i = 0
    while i < len(order):
        m = fuser.run(order, i, grads) if fuser is not None else 0
        if not m:
            _node_backward(tracer, order[i], grads)
            m = 1
        if not retain_graph:
            for node in order[i : i + m]:
                outs = node.outputs
                _release(node)
                _drop_spent(outs, grads)
        i += m
    return grads


def _one_list_holds() -> int:
    holder = [object()]
    w = holder[0]
    return sys.getrefcount(w)


#: what ``sys.getrefcount(v)`` reports for a local ``v`` that one list holds besides
_ONE_HOLDER = _one_list_holds()


def _drop_spent(outs: dict, grads: dict) -> None:
    """Free the gradients of a released node's outputs that nobody can ask for any more:
    their producer has run (nothing later in the sweep reads them) and only the sweep's
    entry holds the variable, so its ``gradient()`` can never be read. As the static plan
    frees a gradient after its last reader, this keeps the sweep's memory (and what the
    caches hold) to what is still needed."""
    for refs in outs.values():
        for ref in refs:
            v = ref()
            if v is not None and id(v) in grads and sys.getrefcount(v) <= _ONE_HOLDER:
                del grads[id(v)]


def accumulate(grads: dict) -> None:
    """Add swept gradients onto the variables' ``.gradient()`` (parameters accumulate until cleared)."""
    for var, g in grads.values():
        if var.stop_gradient or g is None:
            continue
        var._grad = g if var._grad is None else _add(var._grad, g)


def _release(node: Any) -> None:
    """Drop the node's references (values, attrs); variables keep a marker that it is spent."""
    node.inputs = node.outputs = node.out_values = node.attrs = None


def _node_backward(tracer: Any, node: Any, grads: dict) -> None:
    custom = getattr(node, "run_backward", None)
    if custom is not None:  # a whole static program run as one node (declarative)
        custom(grads)
    else:
        _op_node_backward(tracer, node, grads)


def _op_node_backward(tracer: Any, node: Any, grads: dict) -> None:
    prepared = prepare(tracer, node, grads)
    if prepared is None:
        return
    plan, out_values, out_grads, in_vars = prepared
    if plan.direct is not None:
        _run_direct(tracer, plan, out_values, out_grads, in_vars, grads)
        return
    env: dict = {}
    for n, value, gn, g in zip(plan.out_names, out_values, plan.out_gnames, out_grads):
        env[n] = value
        if gn is not None:
            env[gn] = g if g is not None else np.zeros_like(value)
    for n, v in zip(plan.in_names, in_vars):
        env[n] = v._value
    for step in plan.steps:
        _run_step(tracer, step, env)
    for i, gn in plan.wants:
        g = env.get(gn)
        if g is not None:
            add_grad(grads, in_vars[i], g)


def _run_direct(
    tracer: Any, plan: Any, out_values: list, out_grads: list, in_vars: list, grads: dict
) -> None:
    """A one-op plan run from its recipe (``_direct``): what the general path does through
    the name environment, without it."""
    recipe_ins, recipe_outs = plan.direct
    values: dict = {}
    for slot, kind, j in recipe_ins:
        if kind == 0:
            values[slot] = out_values[j]
        elif kind == 1:
            g = out_grads[j]
            values[slot] = g if g is not None else np.zeros_like(out_values[j])
        else:
            values[slot] = in_vars[j]._value
    info, _ins, attrs, wanted, _outs = plan.steps[0]
    res = tracer._call(info, values, attrs, wanted)
    for i, slot in recipe_outs:
        g = res.get(slot)
        if g is not None:
            add_grad(grads, in_vars[i], g)


def add_grad(grads: dict, v: Any, g: Any) -> None:
    """Add the gradient piece ``g`` of variable ``v`` to the sweep's ``grads``."""
    entry = grads.get(id(v))
    if entry is None:
        grads[id(v)] = [v, g]
    else:
        entry[1] = _add(entry[1], g)


def prepare(tracer: Any, node: Any, grads: dict) -> tuple | None:
    """``(plan, output values, output gradients, input variables)`` of an op node, or None
    when no gradient flows through it."""
    out_values, out_grads, out_sig = _outputs(node, grads)
    if out_sig is None:
        return None
    in_vars, in_sig = inputs_of(node)
    if in_sig is None:
        return None
    return plan_for(tracer, node, out_sig, in_sig), out_values, out_grads, in_vars


def plan_for(tracer: Any, node: Any, out_sig: tuple, in_sig: tuple) -> Any:
    """The cached :class:`_GradPlan` of ``node`` for this slot layout."""
    plans = tracer.__dict__.setdefault("_grad_plans", {})
    key = (node.type, id(node.attrs), out_sig, in_sig)
    plan = plans.get(key)
    if plan is None or plan.attrs is not node.attrs:
        if len(plans) >= _MAX_PLANS:
            plans.clear()
        plan = plans[key] = _GradPlan(tracer, node, out_sig, in_sig)
    return plan


def _is_array(value: Any) -> bool:
    """A dense array: numpy's, or a device's (cupy's), not a LoDTensor or SelectedRows."""
    if isinstance(value, np.ndarray):
        return True
    return (
        hasattr(value, "dtype")
        and hasattr(value, "shape")
        and not isinstance(value, (LoDTensor, SelectedRows))
    )


def _outputs(node: Any, grads: dict) -> tuple:
    """The node's output values, their gradients (None where missing) and the outputs'
    signature: per slot, per variable 0 = has a gradient, 1 = gets zeros (a float array off
    the loss path), 2 = gets none; the signature is None when no output has a gradient."""
    values: list = []
    out_grads: list = []
    sig: list = []
    any_grad = False
    for slot, refs in node.outputs.items():
        marks = []
        for ref, value in zip(refs, node.out_values[slot]):
            v = ref()
            entry = grads.get(id(v)) if v is not None else None
            g = entry[1] if entry is not None else None
            if g is not None:
                any_grad = True
                marks.append(0)
            elif _is_array(value) and value.dtype.kind == "f" and value.dtype.itemsize <= 8:
                marks.append(1)
            else:
                marks.append(2)
            values.append(value)
            out_grads.append(g)
        sig.append((slot, tuple(marks)))
    return values, out_grads, tuple(sig) if any_grad else None


def inputs_of(node: Any) -> tuple:
    """The node's input variables and their signature (per slot, which stop gradients);
    the signature is None when none wants a gradient."""
    in_vars: list = []
    sig: list = []
    wanted = False
    for slot, vs in node.inputs.items():
        stops = tuple([v.stop_gradient for v in vs])
        sig.append((slot, stops))
        in_vars += vs
        if not wanted and not all(stops):
            wanted = True
    return in_vars, tuple(sig) if wanted else None


_MAX_PLANS = 1024


class _GradPlan:
    """What the grad maker of one kind of node gives, resolved once: the local names of the
    node's variables and gradients, and the grad ops with their kernels' info and attrs.
    Nodes of the same op type, attrs object and slot layout (which outputs have gradients,
    which inputs stop them) reuse it, so a training step's backward skips the makers."""

    __slots__ = ("attrs", "out_names", "out_gnames", "in_names", "wants", "steps", "direct")

    def __init__(self, tracer: Any, node: Any, out_sig: list, in_sig: list) -> None:
        self.attrs = node.attrs  # held: ``id(attrs)`` in the key stays this object's
        out_names: dict = {}
        out_grads: dict = {}
        self.out_names, self.out_gnames = [], []
        for slot, marks in out_sig:
            names = [f"out:{slot}:{i}" for i in range(len(marks))]
            gnames = []
            for n, mark in zip(names, marks):
                gn = n + GRAD_SUFFIX if mark == 0 else n + GRAD_SUFFIX + "@ZERO"
                gnames.append(gn if mark != 2 else EMPTY_VAR)
                self.out_gnames.append(gn if mark != 2 else None)
            self.out_names += names
            out_names[slot] = names
            out_grads[slot] = gnames
        in_names: dict = {}
        in_grads: dict = {}
        self.in_names, self.wants = [], []
        for slot, stops in in_sig:
            names, gnames = [], []
            for i, stop in enumerate(stops):
                n = f"in:{slot}:{i}"
                names.append(n)
                if stop:
                    gnames.append(EMPTY_VAR)
                else:
                    gn = n + GRAD_SUFFIX + f"@IN{len(self.wants)}"
                    gnames.append(gn)
                    self.wants.append((len(self.in_names) + i, gn))
            self.in_names += names
            in_names[slot] = names
            in_grads[slot] = gnames
        ctx = GradContext(node.type, in_names, out_names, node.attrs, in_grads, out_grads)
        self.steps = [_grad_step(tracer, desc) for desc in node_maker(tracer, node)(ctx)]
        self.direct = _direct(self) if len(self.steps) == 1 else None


def _direct(plan: _GradPlan) -> tuple | None:
    """A one-op plan's recipe without the name environment: per kernel input slot where its
    value comes from (0: an output's value, 1: an output's gradient, 2: an input's value, with
    the index), and per wanted input gradient the result slot it is in; None when the op
    reads or writes a name the node does not provide (a temporary) or has duplicable slots."""
    _info, ins, _attrs, _wanted, outs = plan.steps[0]
    sources: dict = {}
    for j, n in enumerate(plan.out_names):
        sources[n] = (0, j)
    for j, gn in enumerate(plan.out_gnames):
        if gn is not None:
            sources[gn] = (1, j)
    for j, n in enumerate(plan.in_names):
        sources[n] = (2, j)
    recipe_ins = []
    for slot, dup, names in ins:
        if dup or len(names) != 1 or names[0] not in sources:
            return None
        recipe_ins.append((slot, *sources[names[0]]))
    produced = {}
    for slot, dup, names in outs:
        if dup or len(names) != 1:
            return None
        produced[names[0]] = slot
    recipe_outs = [(i, produced[gn]) for i, gn in plan.wants if gn in produced]
    return tuple(recipe_ins), tuple(recipe_outs)


def _grad_step(tracer: Any, desc: Any) -> tuple:
    """One grad op, resolved: (info, inputs [(slot, duplicable, names)], complete attrs,
    wanted output slots, outputs [(slot, duplicable, names)])."""
    info = tracer._info(desc.type)
    ins = []
    for slot, dup in info.in_slots:
        names = [n for n in desc.inputs.get(slot) or () if n != EMPTY_VAR]
        if names:
            ins.append((slot, dup, names))
    # kernels may keep private state in their attrs ('@...'); it is not the grad op's business
    attrs = info.complete({k: v for k, v in desc.attrs.items() if not k.startswith("@")})
    wanted = frozenset(s for s, ns in desc.outputs.items() if any(n != EMPTY_VAR for n in ns))
    outs = [
        (slot, dup, desc.outputs[slot]) for slot, dup in info.out_slots if desc.outputs.get(slot)
    ]
    return info, ins, attrs, wanted, outs


def node_maker(tracer: Any, node: Any) -> Any:
    return tracer._info(node.type).maker


def _run_step(tracer: Any, step: tuple, env: dict) -> None:
    info, ins, attrs, wanted, outs = step
    values: dict = {}
    for slot, dup, names in ins:
        if dup:
            vs = [env[n] for n in names if n in env]
            if vs:
                values[slot] = vs
        else:
            for n in names:  # the first name that has a value (as a filtered list's [0])
                if n in env:
                    values[slot] = env[n]
                    break
    res = tracer._call(info, values, attrs, wanted)
    for slot, dup, names in outs:
        r = res.get(slot)
        if r is None:
            continue
        if dup:
            for n, x in zip(names, r):
                if n != EMPTY_VAR and x is not None:
                    env[n] = x
        elif names[0] != EMPTY_VAR:
            env[names[0]] = r
