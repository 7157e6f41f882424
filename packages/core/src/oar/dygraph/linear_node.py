"""A Linear layer's call as one tape node: matrix product, bias add and activation.

Traced op by op, a Linear layer leaves three tape nodes (``mul``, ``elementwise_add``, the
activation), and its backward walks them through the generic machinery: per node the grad
plan's lookups, and for the bias and activation the tape fuser's chain matching. That Python
cost about as much per step as the layer's kernels other than the GEMMs. :func:`trace_linear`
records the layer as one :class:`LinearNode` instead, whose backward replays what those three
nodes would, resolved once per kind of call (:class:`_Kind`):

- the same kernels: ``mul``'s, the bias add + activation as one fused kernel where a plugin
  offers the fusion (as :func:`oar.dygraph.chain.trace_chain` runs it) or as the two ops'
  kernels; in the backward the grad kernels the ops' grad makers name, the activation's and
  the bias add's fused where a plugin offers it (as :mod:`oar.dygraph.tape_fusion` runs
  them): results equal to the op-by-op tape's;
- a kind is resolved by running the three ops once, building their nodes and asking the
  generic machinery for the recipes (grad plans, the tape fuser's chain); a kind whose grad
  ops are not one kernel call each is declined and traced op by op, as are
  :class:`TracedLayer` recordings, values that are not plain float arrays, layers without a
  bias and activations outside :data:`ACTS`.

The intermediates (the product, the biased sum) belong to the layer: no user variable holds
them, so no one can ask for their gradients.
"""

from __future__ import annotations

import functools
import sys
import weakref
from typing import Any

import numpy as np

from oar.dygraph import chain as _chain
from oar.dygraph.backward import add_grad, inputs_of, plan_for
from oar.dygraph.varbase import VarBase
from oar.errors import OarError
from oar.fusion import disabled

#: activations a Linear layer's node covers; softmax stays op by op, so that the loss fusions
#: (bias add + softmax + cross-entropy + mean) still see it
ACTS = frozenset((None, "relu", "sigmoid", "tanh"))
_MAX_KINDS = 256


def _entry_only() -> int:
    entry = [object()]
    held = entry[0]
    return sys.getrefcount(held)


#: ``sys.getrefcount(v)`` of a local ``v`` that one list (the sweep's entry) holds besides
_ENTRY_ONLY = _entry_only()
# the slots of a node's backward environment
OUT, MID, PRE, BIAS, X, W, G_OUT, G_MID, G_PRE, G_BIAS, G_X, G_W = range(12)


class LinearNode:
    """The tape node of one Linear call; the backward sweep calls ``run_backward`` for nodes
    that are not single ops."""

    type = "linear"
    __slots__ = ("inputs", "outputs", "out_values", "attrs", "seq", "kind")

    def run_backward(self, grads: dict) -> None:
        out = self.outputs["Out"][0]()
        entry = grads.get(id(out)) if out is not None else None
        if entry is None or entry[1] is None:
            return
        ins = self.inputs
        x, w, b = ins["X"][0], ins["Y"][0], ins["Bias"][0]
        out_value, mid, pre = self.out_values["Out"]
        g = entry[1]
        steps = self.kind.steps
        # the incoming gradient may take the first step's result when nobody else can see it:
        # only the sweep's entry holds it and the output variable (as the static plan frees it)
        donate = (
            steps[0].donatable is not None
            and g.__class__ is np.ndarray
            and g.base is None
            and g.flags.writeable
            and sys.getrefcount(g) <= _ENTRY_ONLY
            and sys.getrefcount(out) <= _ENTRY_ONLY
        )
        env = [out_value, mid, pre, b._value, x._value, w._value, g, None, None, None, None, None]
        del g
        if donate:
            steps[0](env, steps[0].donatable)
            steps = steps[1:]
        for step in steps:
            step(env)
        for var, slot in ((x, G_X), (w, G_W), (b, G_BIAS)):
            g = env[slot]
            if g is not None and not var.stop_gradient:
                add_grad(grads, var, g)


class _Kind:
    """One kind of Linear call, resolved: its forward calls and its backward steps."""

    __slots__ = ("mul", "bias_act", "steps")


def trace_linear(tracer: Any, x: VarBase, w: VarBase, b: Any, act: Any, rank: int) -> Any:
    """``act(x @ w + b)`` as one node; None when this call is to be traced op by op."""
    if b is None or getattr(tracer, "_recorder", True) is not None:
        return None  # no bias, a TracedLayer recording, or not the eager tracer
    xv, wv, bv = x._value, w._value, getattr(b, "_value", None)
    if bv.__class__ is not np.ndarray or xv.dtype.kind != "f":
        return None
    stops = (x.stop_gradient, w.stop_gradient, b.stop_gradient)
    big = xv.size // xv.shape[-1] * wv.shape[-1] >= _chain.SMALL_CHAIN  # as chains decide
    key = (act, xv.dtype, rank, stops, big, disabled())
    kinds = tracer.__dict__.setdefault("_linear_kinds", {})
    kind = kinds.get(key, False)
    if kind is False:
        if len(kinds) >= _MAX_KINDS:
            kinds.clear()
        kind = kinds[key] = _resolve(tracer, x, w, b, act, rank)
    if kind is None:
        return None
    pre = kind.mul(xv, wv)
    mid, out_value = kind.bias_act(pre, bv)
    out = VarBase(out_value)
    if tracer._has_grad and not (stops[0] and stops[1] and stops[2]):
        node = LinearNode.__new__(LinearNode)
        node.inputs = {"X": [x], "Y": [w], "Bias": [b]}
        node.outputs = {"Out": [weakref.ref(out)]}
        node.out_values = {"Out": [out_value, mid, pre]}
        node.attrs = None
        node.seq = next(tracer._seq)
        node.kind = kind
        out.stop_gradient = False
        out._node = node
    return out


def _resolve(tracer: Any, x: VarBase, w: VarBase, b: VarBase, act: Any, rank: int) -> Any:
    """The kind of this call, from its three op-by-op nodes; None: declined."""
    from oar.dygraph.tracer import _Node

    pre, mid = VarBase(None, stop_gradient=False), VarBase(None, stop_gradient=False)
    ops = [
        ("mul", {"X": [x], "Y": [w]}, {"Out": [pre]}, {"x_num_col_dims": rank - 1}),
        ("elementwise_add", {"X": [pre], "Y": [b]}, {"Out": [mid]}, {"axis": rank - 1}),
    ]
    out = mid
    if act is not None:
        out = VarBase(None, stop_gradient=False)
        ops.append((act, {"X": [mid]}, {"Out": [out]}, {}))
    old, tracer._has_grad = tracer._has_grad, False
    try:  # run once op by op: the values the recipes are resolved against
        for type_, ins, outs, attrs in ops:
            tracer.trace_op(type_, ins, outs, dict(attrs))
        nodes = [
            _Node(t, ins, outs, tracer.complete_attrs(t, attrs), k)
            for k, (t, ins, outs, attrs) in enumerate(ops)
        ]
        for v in (pre, mid, out):
            v.stop_gradient = False
        kind = _Kind()
        kind.mul = _forward(tracer, nodes[0], "X", "Y")
        steps = []
        if act is not None:
            fused = _fused_act_bias_grad(tracer, nodes[2], nodes[1], out)
            if fused is not None:
                steps.append(fused)
            else:
                steps.append(_grad_step(tracer, nodes[2], {"X": G_MID}, OUT, G_OUT, {"X": MID}))
                steps.append(_add_grad_step(tracer, nodes[1], G_MID))
        else:
            steps.append(_add_grad_step(tracer, nodes[1], G_OUT))
        io = {"X": X, "Y": W}
        steps.append(_grad_step(tracer, nodes[0], {"X": G_X, "Y": G_W}, PRE, G_PRE, io))
        if None in steps:
            return None
        pre_read = any(PRE in step.reads for step in steps)
        kind.bias_act = _bias_act(tracer, ops[1:], nodes[1:], act, not pre_read)
        if kind.mul is None or kind.bias_act is None:
            return None
        kind.steps = tuple(steps)
        return kind
    except OarError:
        return None  # the op-by-op path reports the problem in the ops' own words
    finally:
        tracer._has_grad = old


def _guarded(info: Any, kernel: Any, values: dict, attrs: dict) -> dict:
    from oar.dygraph.tracer import _failure

    try:
        return kernel(values, attrs)
    except OarError:
        raise
    except Exception as exc:
        raise _failure(info, values, exc) from exc


def _forward(tracer: Any, node: Any, *slots: str) -> Any:
    """``f(*values) -> Out``: the op's kernel on plain arrays (None: not a direct kernel)."""
    info = tracer._info(node.type)
    entry = tracer._kernel(info, node.inputs[slots[0]][0]._value.dtype)
    if not entry.direct:
        return None
    kernel, attrs = entry.kernel, node.attrs

    def call(*values: Any) -> Any:
        return _guarded(info, kernel, dict(zip(slots, values)), attrs)["Out"]

    return call


def _bias_act(tracer: Any, ops: list, nodes: list, act: Any, donate: bool) -> Any:
    """``f(pre, bias) -> (mid, out)``: the bias add and the activation, fused where offered;
    ``donate``: the fused kernel may write into ``pre`` (the backward reads only its shape)."""
    add = _forward(tracer, nodes[0], "X", "Y")
    if add is None:
        return None
    if act is None:

        def biased(pre: Any, bias: Any) -> tuple:
            out = add(pre, bias)
            return out, out

        return biased
    fusion = tracer._reg.fusions.chain(tracer.device, ("elementwise_add", act))
    kind = _chain._kind(tracer, fusion, ops) if fusion is not None and not disabled() else None
    if kind is None:
        activate = _forward(tracer, nodes[1], "X")
        if activate is None:
            return None

        def unfused(pre: Any, bias: Any) -> tuple:
            mid = add(pre, bias)
            return mid, activate(mid)

        return unfused
    feeds = {(k, slot): fslot for fslot, k, slot in kind.getters}
    if set(feeds) != {(0, "X"), (0, "Y")}:
        return None
    s_pre, s_bias = feeds[(0, "X")], feeds[(0, "Y")]
    mid_slot, out_slot = kind.outs[0][1], kind.outs[1][1]
    fkernel, fattrs, what = kind.kernel, kind.fattrs, f"fused op '{kind.name}'"
    if donate and fusion.inplace:  # the product is the layer's own: the kernel may reuse it
        fkernel = functools.partial(fkernel, donated=frozenset({s_pre}))

    def fused(pre: Any, bias: Any) -> tuple:
        res = _chain.call_fused(fkernel, {s_pre: pre, s_bias: bias}, fattrs, what)
        return res[mid_slot], res[out_slot]

    return fused


def _grad_step(
    tracer: Any, node: Any, wants: dict, out_value: int, out_grad: int, in_values: dict
) -> Any:
    """``step(env)``: the one grad kernel of ``node``'s plan, reading its output value,
    output gradient and input values from the environment slots given and writing the
    gradients of the inputs in ``wants`` (slot -> env slot); None: not one direct kernel."""
    in_vars, in_sig = inputs_of(node)
    plan = plan_for(tracer, node, (("Out", (0,)),), in_sig)
    if plan.direct is None:
        return None
    recipe_ins, recipe_outs = plan.direct
    positions = [slot for slot, stops in in_sig for _ in stops]
    getters = []
    for slot, kind, j in recipe_ins:
        if kind == 0:
            getters.append((slot, out_value))
        elif kind == 1:
            getters.append((slot, out_grad))
        elif positions[j] in in_values:
            getters.append((slot, in_values[positions[j]]))
        else:
            return None
    puts = [(slot, wants[positions[i]]) for i, slot in recipe_outs if positions[i] in wants]
    info, _ins, attrs, wanted, _outs = plan.steps[0]
    entry = tracer._kernel(info, node.inputs[positions[0]][0]._value.dtype)
    kernel = entry.kernel if entry.direct else _with_wanted(entry, wanted)

    def step(env: list) -> None:
        res = _guarded(info, kernel, {slot: env[i] for slot, i in getters}, attrs)
        for slot, i in puts:
            env[i] = res.get(slot)

    step.reads = frozenset(i for slot, i in getters if slot not in entry.no_need_buffer)
    step.donatable = None
    return step


def _with_wanted(entry: Any, wanted: frozenset) -> Any:
    """A kernel that takes the wanted output slots, as a ``kernel(inputs, attrs)``."""
    return lambda values, attrs: entry.call(values, attrs, wanted)


def _add_grad_step(tracer: Any, node: Any, out_grad: int) -> Any:
    """The bias add's grad step: gradients of the product and the bias."""
    io = {"X": PRE, "Y": BIAS}
    return _grad_step(tracer, node, {"X": G_PRE, "Y": G_BIAS}, MID, out_grad, io)


def _fused_act_bias_grad(tracer: Any, act_node: Any, add_node: Any, out: Any) -> Any:
    """The activation's and the bias add's grad ops as the tape fuser's fused kernel, when a
    plugin offers one for them (None otherwise)."""
    from oar.dygraph.tape_fusion import _HEAD_GRAD, _OUT_VALUE, _VALUE, tape_fuser

    fuser = tape_fuser(tracer)
    if fuser is None or np.size(out._value) < _chain.SMALL_CHAIN:
        return None
    chain = [act_node, add_node]
    head_sig = (("Out", (0,)),)
    in_sigs = [inputs_of(n)[1] for n in chain]
    sources = {
        (_VALUE, 0, "X"): MID,
        (_VALUE, 1, "X"): PRE,
        (_VALUE, 1, "Y"): BIAS,
        (_OUT_VALUE, 0, "Out"): OUT,
        (_OUT_VALUE, 1, "Out"): MID,
        (_HEAD_GRAD, 0, "Out"): G_OUT,
    }
    targets = {(1, "X"): G_PRE, (1, "Y"): G_BIAS}
    for fusion in fuser.by_first.get(act_node.type + "_grad", ()):
        if fusion.ops[1:] != ("elementwise_add_grad",):
            continue
        entry = fuser._build(fusion, chain, head_sig, (("X", 0),), in_sigs)
        if entry is None:
            continue
        getters = [(fs, sources.get((kind, k, slot))) for fs, kind, k, slot, _i in entry.getters]
        puts = [(fslot, targets.get((k, slot))) for fslot, k, slot, _i in entry.outs]
        if any(i is None for _s, i in getters + puts):
            continue
        what = f"fused backward '{entry.name}'"
        step = _fused_step(entry.kernel, entry.attrs, what, getters, puts)
        step.reads = frozenset(
            i for fs, i in getters if not _shape_only(tracer, chain, in_sigs, fs, out._value)
        )
        head = [fs for fs, i in getters if i == G_OUT]
        step.donatable = frozenset(head) if fusion.inplace and len(head) == 1 else None
        return step
    return None


def _shape_only(tracer: Any, chain: list, in_sigs: list, fslot: str, value: Any) -> bool:
    """Whether the fused backward's input ``fslot`` (``"<k>.<grad op slot>"``) is read only
    for its shape: op k's grad kernel declares that slot ``no_need_buffer``."""
    k, _, slot = fslot.partition(".")
    node = chain[int(k)]
    plan = plan_for(tracer, node, ((next(iter(node.outputs)), (0,)),), in_sigs[int(k)])
    entry = tracer._kernel(plan.steps[0][0], value.dtype)
    return slot in entry.no_need_buffer


def _fused_step(kernel: Any, attrs: Any, what: str, getters: list, puts: list) -> Any:
    def step(env: list, donated: frozenset | None = None) -> None:
        ins = {s: env[i] for s, i in getters}
        if donated:
            res = _chain.call_fused(functools.partial(kernel, donated=donated), ins, attrs, what)
        else:
            res = _chain.call_fused(kernel, ins, attrs, what)
        for s, i in puts:
            env[i] = res.get(s)

    return step
