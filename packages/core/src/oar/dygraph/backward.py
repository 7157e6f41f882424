"""Reverse sweep over the eager tape, replaying the registered grad makers.

For each recorded node (newest first) the grad maker sees a
:class:`oar.registry.GradContext` whose names are local aliases of the node's
variables; the grad ops it returns run at once through the same kernels the
static executor uses. Gradients of a variable used more than once are summed;
variables with ``stop_gradient`` get none.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from oar.errors import OarError
from oar.lod_tensor import SelectedRows
from oar.registry import EMPTY_VAR, GRAD_SUFFIX, GradContext

_FLOATS = frozenset(("float16", "float32", "float64"))


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
            rows, a.height(), np.concatenate([np.asarray(a.value), np.asarray(b.value)])
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
    accumulate(sweep(tracer, [(loss, np.ones_like(np.asarray(loss._value)))], retain_graph))


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
    for node in sorted(nodes.values(), key=lambda n: -n.seq):
        _node_backward(tracer, node, grads)
        if not retain_graph:
            _release(node)
    return grads


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
    env: dict = {}
    out_names: dict = {}
    out_grads: dict = {}
    any_grad = False
    missing = []
    for slot, refs in node.outputs.items():
        names, gnames = [], []
        for i, (ref, value) in enumerate(zip(refs, node.out_values[slot])):
            n = f"out:{slot}:{i}"
            names.append(n)
            env[n] = value
            v = ref()
            entry = grads.get(id(v)) if v is not None else None
            if entry is not None and entry[1] is not None:
                gn = n + GRAD_SUFFIX
                env[gn] = entry[1]
                gnames.append(gn)
                any_grad = True
            else:
                gnames.append(None)
                missing.append((slot, i, value, n))
        out_names[slot] = names
        out_grads[slot] = gnames
    if not any_grad:
        return
    for slot, i, val, n in missing:  # outputs off the loss path get zero gradients
        if isinstance(val, np.ndarray) and val.dtype.name in _FLOATS:
            gn = n + GRAD_SUFFIX + "@ZERO"
            env[gn] = np.zeros_like(val)
            out_grads[slot][i] = gn
        else:
            out_grads[slot][i] = EMPTY_VAR
    in_names: dict = {}
    in_grads: dict = {}
    wants = []
    for slot, vs in node.inputs.items():
        names, gnames = [], []
        for i, v in enumerate(vs):
            n = f"in:{slot}:{i}"
            names.append(n)
            env[n] = v._value
            if v.stop_gradient:
                gnames.append(EMPTY_VAR)
            else:
                gn = n + GRAD_SUFFIX + f"@IN{len(wants)}"
                gnames.append(gn)
                wants.append((v, gn))
        in_names[slot] = names
        in_grads[slot] = gnames
    if not wants:
        return
    ctx = GradContext(node.type, in_names, out_names, node.attrs, in_grads, out_grads)
    for desc in node_maker(tracer, node)(ctx):
        _run_grad_op(tracer, desc, env)
    for v, gn in wants:
        g = env.get(gn)
        if g is None:
            continue
        entry = grads.get(id(v))
        if entry is None:
            grads[id(v)] = [v, g]
        else:
            entry[1] = _add(entry[1], g)


def node_maker(tracer: Any, node: Any) -> Any:
    return tracer._info(node.type).maker


def _run_grad_op(tracer: Any, desc: Any, env: dict) -> None:
    info = tracer._info(desc.type)
    values: dict = {}
    for slot, dup in info.in_slots:
        names = desc.inputs.get(slot)
        if not names:
            continue
        names = [n for n in names if n != EMPTY_VAR and n in env]
        if not names:
            continue
        values[slot] = [env[n] for n in names] if dup else env[names[0]]
    # kernels may keep private state in their attrs ('@...'); it is not the grad op's business
    attrs = info.complete({k: v for k, v in desc.attrs.items() if not k.startswith("@")})
    wanted = frozenset(s for s, ns in desc.outputs.items() if any(n != EMPTY_VAR for n in ns))
    res = tracer._call(info, values, attrs, wanted)
    for slot, dup in info.out_slots:
        names = desc.outputs.get(slot)
        if not names:
            continue
        r = res.get(slot)
        if r is None:
            continue
        if dup:
            for n, x in zip(names, r):
                if n != EMPTY_VAR and x is not None:
                    env[n] = x
        elif names[0] != EMPTY_VAR:
            env[names[0]] = r
