"""Fusing the backward of a chain of tape nodes into one kernel call, through the fusion hook.

The static executor fuses adjacent grad ops of a plan when a plugin offers a fused kernel
for their chain of op types (:mod:`oar.fusion`). The eager backward sweep does the same on
the tape: where the nodes met next in the sweep each replay one grad op, and together they
form a registered chain (``relu_grad`` + ``elementwise_add_grad`` of a Linear layer's bias
and activation; ``mean_grad`` + ``cross_entropy_grad`` + ``softmax_grad`` +
``elementwise_add_grad`` of a classifier's loss), the chain runs as the fused kernel.

A chain qualifies only when its intermediates (an output of one node that the next node
reads) carry no gradient the fused kernel would leave out:

- each node has one output, read by the next node of the chain exactly once;
- no other node has passed a gradient to the intermediate yet (nothing else on the loss
  path reads it);
- nothing but the tape holds the intermediate variable, so no one can ask it for its
  ``gradient()`` afterwards (a variable the user keeps, or passes to
  ``fluid.dygraph.grad``, keeps the unfused backward).

Everything else, and ``OAR_DISABLE_FUSION=1``, takes the node-by-node backward. Fusions see
stand-ins of the grad ops (:class:`oar.framework.operator.Operator` with ``block=None``)
whose variable names are consistent along the chain, so ``make`` may compare them.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from oar.dygraph import chain as _chain
from oar.dygraph.backward import add_grad, inputs_of, plan_for
from oar.dygraph.tracer import _Node
from oar.framework.operator import Operator
from oar.fusion import FusedOp, disabled
from oar.registry import EMPTY_VAR


def _tape_only() -> int:
    holder = [object()]
    w = holder[0]
    return sys.getrefcount(w)


#: what ``sys.getrefcount(w)`` reports in ``_run_chain`` for a variable ``w`` held only by one
#: list (a node's input slot) besides that local
_TAPE_ONLY = _tape_only()
_MAX_CHAINS = 256
_VALUE, _OUT_VALUE, _HEAD_GRAD = 0, 1, 2


def tape_fuser(tracer: Any) -> TapeFuser | None:
    """The tracer's fuser for the fusions now registered on its device (None: none, or
    fusion disabled)."""
    if disabled():
        return None
    fusions = tracer._reg.fusions.for_device(tracer.device)
    if not fusions:
        return None
    fuser = tracer.__dict__.get("_tape_fuser")
    key = tuple(map(id, fusions))
    if fuser is None or fuser.key != key:
        fuser = tracer._tape_fuser = TapeFuser(tracer, fusions, key)
    return fuser


class _Chain:
    """A matched chain, resolved once: the fused kernel, its attrs, where each of its inputs
    comes from, and which variables its outputs are the gradients of."""

    __slots__ = ("name", "kernel", "attrs", "getters", "outs", "links", "held")

    def __init__(self, name, kernel, attrs, getters, outs, links, held) -> None:
        self.name = name
        self.kernel = kernel
        self.attrs = attrs
        self.getters = getters  # [(fused slot, kind, node index, slot, index)]
        self.outs = outs  # [(fused slot, node index, input slot, index)]
        self.links = links  # per node but the last: (input slot, index, next node's output slot)
        self.held = held  # the nodes' attrs objects: their ids in the cache key stay theirs


class TapeFuser:
    """Matches registered chains of grad ops against the nodes of a backward sweep."""

    def __init__(self, tracer: Any, fusions: list, key: tuple) -> None:
        self.tracer = tracer
        self.key = key
        self.by_first: dict = {}  # grad op type -> chain fusions starting with it
        for f in fusions:
            if not f.repeated:
                self.by_first.setdefault(f.ops[0], []).append(f)
        self.heads: dict = {}  # forward op type -> fusions its grad op may start
        self.chains: dict = {}  # chain key -> _Chain, or None (declined)

    def run(self, order: list, i: int, grads: dict) -> int:
        """Run the fused backward of a chain starting at ``order[i]``; the number of nodes it
        covered (0: none, the caller runs ``order[i]`` alone)."""
        node = order[i]
        if node.__class__ is not _Node:
            return 0
        cands = self.heads.get(node.type)
        if cands is None:
            cands = self.heads[node.type] = self._learn(node, grads)
        for fusion in cands:
            m = len(fusion.ops)
            chain = order[i : i + m]
            if len(chain) == m and self._run_chain(fusion, chain, grads):
                return m
        return 0

    def _learn(self, node: Any, grads: dict) -> list:
        """The fusions whose first grad op is the one ``node``'s type replays."""
        sig = _head_sig(node, grads)
        if sig is None:
            return []
        in_sig = inputs_of(node)[1]
        if in_sig is None:
            return []
        steps = plan_for(self.tracer, node, sig, in_sig).steps
        if len(steps) != 1:
            return []
        return list(self.by_first.get(steps[0][0].opdef.type, ()))

    def _run_chain(self, fusion: Any, chain: list, grads: dict) -> bool:
        head_sig = _head_sig(chain[0], grads)
        if head_sig is None:
            return False
        if len(chain) == 2 and _head_grad_size(chain[0], grads) < _chain.SMALL_CHAIN:
            return False  # small: the two grad ops cost less unfused
        sigs = []
        for node in chain:
            if node.__class__ is not _Node or node.inputs is None:
                return False
            sigs.append((node.type, id(node.attrs), _stops(node)))
        key = (fusion.name, head_sig, *sigs)
        entry = self.chains.get(key, False)
        if entry is False:
            if len(self.chains) >= _MAX_CHAINS:
                self.chains.clear()
            links = _links(chain, grads)
            entry = None
            if links is not None:
                in_sigs = [inputs_of(node)[1] for node in chain]
                entry = self._build(fusion, chain, head_sig, links, in_sigs)
            self.chains[key] = entry
        if entry is None:
            return False
        for j, (slot, idx, out_slot) in enumerate(entry.links):
            w = chain[j + 1].outputs[out_slot][0]()
            if w is None or chain[j].inputs[slot][idx] is not w or id(w) in grads:
                return False  # linked otherwise, or its gradient has another source
            if sys.getrefcount(w) > _TAPE_ONLY:
                return False  # someone else holds the intermediate: its gradient may be read
        self._call(entry, chain, grads)
        return True

    def _call(self, entry: _Chain, chain: list, grads: dict) -> None:
        inputs: dict = {}
        for fslot, kind, k, slot, idx in entry.getters:
            node = chain[k]
            if kind == _VALUE:
                inputs[fslot] = node.inputs[slot][idx]._value
            elif kind == _OUT_VALUE:
                inputs[fslot] = node.out_values[slot][idx]
            else:
                inputs[fslot] = grads[id(node.outputs[slot][idx]())][1]
        res = _chain.call_fused(entry.kernel, inputs, entry.attrs, f"fused backward '{entry.name}'")
        for fslot, k, slot, idx in entry.outs:
            g = res.get(fslot)
            if g is not None:
                add_grad(grads, chain[k].inputs[slot][idx], g)

    def _build(self, fusion, chain, head_sig, links, in_sigs) -> _Chain | None:
        """Resolve a chain: the grad op of each node under names consistent along it, the
        fusion's kernel for them (None: declined, or a node replays other grad ops)."""
        names: dict = {}  # id(variable) -> its name in the stand-ins

        def name_of(v: Any) -> str:
            n = names.get(id(v))
            if n is None:
                n = names[id(v)] = f"v{len(names)}"
            return n

        sources: dict = {}  # name -> (kind, node index, slot, index): where its value comes from
        grad_of: dict = {}  # gradient name -> (node index, input slot, index)
        inner = {id(chain[j].inputs[slot][idx]) for j, (slot, idx) in enumerate(links)}
        ops, attrs_by_k = [], {}
        for k, node in enumerate(chain):
            out_slot = head_sig[0][0] if k == 0 else next(iter(node.outputs))
            plan = plan_for(self.tracer, node, ((out_slot, (0,)),), in_sigs[k])
            if len(plan.steps) != 1 or plan.steps[0][0].opdef.type != fusion.ops[k]:
                return None
            local: dict = {}
            out_var = node.outputs[out_slot][0]()
            vn = name_of(out_var)
            local[plan.out_names[0]] = vn
            sources.setdefault(vn, (_OUT_VALUE, k, out_slot, 0))
            local[plan.out_gnames[0]] = vn + "@GRAD"
            if k == 0:
                sources[vn + "@GRAD"] = (_HEAD_GRAD, k, out_slot, 0)
            positions = [(slot, i) for slot, stops in in_sigs[k] for i in range(len(stops))]
            for (slot, i), n in zip(positions, plan.in_names):
                v = node.inputs[slot][i]
                local[n] = name_of(v)
                sources.setdefault(local[n], (_VALUE, k, slot, i))
            for p, gn in plan.wants:
                slot, i = positions[p]
                v = node.inputs[slot][i]
                local[gn] = name_of(v) + "@GRAD"
                if id(v) not in inner:
                    grad_of[local[gn]] = (k, slot, i)
            op = _stand_in(plan.steps[0], local, k)
            if op is None:
                return None
            ops.append(op)
            attrs_by_k[str(k)] = op.attrs
        kernel = fusion.make(ops, None)
        if kernel is None:
            return None
        fop = FusedOp(fusion, ops)
        getters = []
        for fslot, ns in fop.inputs.items():
            src = sources.get(ns[0])
            if src is None or len(ns) != 1:
                return None  # read from outside the chain's variables: not ours to fuse
            getters.append((fslot, *src))
        outs = [(fslot, *grad_of[ns[0]]) for fslot, ns in fop.outputs.items() if ns[0] in grad_of]
        links = [
            (slot, idx, next(iter(chain[j + 1].outputs))) for j, (slot, idx) in enumerate(links)
        ]
        held = [n.attrs for n in chain]
        return _Chain(fusion.name, kernel, attrs_by_k, getters, outs, links, held)


def _head_sig(node: Any, grads: dict) -> tuple | None:
    """The head node's output signature when it has one output, with a gradient."""
    if len(node.outputs) != 1:
        return None
    slot, refs = next(iter(node.outputs.items()))
    if len(refs) != 1:
        return None
    v = refs[0]()
    entry = grads.get(id(v)) if v is not None else None
    if entry is None or entry[1] is None:
        return None
    return ((slot, (0,)),)


def _head_grad_size(node: Any, grads: dict) -> int:
    g = grads[id(next(iter(node.outputs.values()))[0]())][1]
    return g.size if g.__class__ is np.ndarray else 0


def _stops(node: Any) -> tuple:
    return tuple([(slot, *[v.stop_gradient for v in vs]) for slot, vs in node.inputs.items()])


def _links(chain: list, grads: dict) -> tuple | None:
    """Per node but the last, ``(slot, index)`` of its one input that the next node
    produced, or None when the chain is not linked so (or an intermediate has a gradient
    from elsewhere)."""
    links = []
    for j in range(len(chain) - 1):
        prod = chain[j + 1]
        if prod.__class__ is not _Node or prod.inputs is None or len(prod.outputs) != 1:
            return None
        refs = next(iter(prod.outputs.values()))
        if len(refs) != 1:
            return None
        w = refs[0]()
        if w is None or w.stop_gradient or id(w) in grads:
            return None
        found = [
            (slot, i) for slot, vs in chain[j].inputs.items() for i, v in enumerate(vs) if v is w
        ]
        if len(found) != 1:
            return None
        links.append(found[0])
    return tuple(links)


def _stand_in(step: tuple, local: dict, k: int) -> Operator | None:
    """The grad op of ``step`` as an operator over chain-wide names (None: duplicable slots,
    which fused kernels do not take)."""
    info, ins, attrs, _wanted, outs = step
    if any(dup for _s, dup, _n in ins) or any(dup for _s, dup, _n in outs):
        return None
    inputs = {slot: [local.get(n, f"n{k}:{n}") for n in names] for slot, _d, names in ins}
    outputs = {
        slot: [local.get(n, f"n{k}:{n}") for n in names]
        for slot, _d, names in outs
        if any(n != EMPTY_VAR for n in names)
    }
    return Operator(None, info.opdef.type, inputs, outputs, dict(attrs))
