"""Tracing a layer's chain of ops as one fused kernel call, through the fusion hook.

A layer whose ops form a chain with intermediates of its own (a Linear layer's bias add
and activation) traces them with :func:`trace_chain`. When a plugin registered a fusion for
the chain's op types on the tracer's device (:mod:`oar.fusion`, as the static executor
uses it), the chain runs as that one kernel; the tape still records one node per op, so
the backward is the ops' own (which the backward sweep may fuse in turn, see
:mod:`oar.dygraph.tape_fusion`). Otherwise, and with ``OAR_DISABLE_FUSION=1`` or while a
:class:`TracedLayer` records the ops, each op is traced on its own.

A fused kernel may return an intermediate as a shape stand-in (``oar.api.shape_stand_in``).
The chain is then fused only if no grad op of the chain reads that intermediate's data
(only through ``no_need_buffer`` slots), checked once per kind of chain, as the static plan
checks the readers of its intermediates.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from oar.errors import OarError, OpRuntimeError
from oar.framework.operator import Operator
from oar.fusion import disabled
from oar.registry import EMPTY_VAR, GRAD_SUFFIX, GradContext

_MAX_KINDS = 256
#: elements below which a chain of two ops is traced op by op (forward here, backward in
#: :mod:`oar.dygraph.tape_fusion`): on small arrays the two numpy calls cost less than a
#: fused kernel's dispatch and checks, and there is no memory pass to save. Longer chains
#: (a loss and its gradient) always fuse: each op they cover is a tape node less.
SMALL_CHAIN = 4096


def trace_chain(tracer: Any, ops: list) -> None:
    """Trace ``ops`` = ``[(type, inputs, outputs, attrs)]``, each op reading the previous
    one's single output, as :meth:`Tracer.trace_op` would one by one."""
    if tracer._recorder is None:
        fusion = tracer._reg.fusions.chain(tracer.device, tuple([op[0] for op in ops]))
        if fusion is not None and not disabled():
            kind = _kind(tracer, fusion, ops)
            if kind is not None and _run(tracer, kind, ops):
                return
    for type_, ins, outs, attrs in ops:
        tracer.trace_op(type_, ins, outs, attrs)


class _Kind:
    """One kind of chain, resolved once: the fused kernel, the ops' infos and complete attrs,
    where each kernel input comes from and which result each op's output takes."""

    __slots__ = ("kernel", "name", "infos", "attrs", "fattrs", "getters", "links", "outs")

    def __init__(self, kernel, name, infos, attrs, getters, links, outs) -> None:
        self.kernel = kernel
        self.name = name
        self.infos = infos
        self.attrs = attrs
        self.fattrs = {str(k): a for k, a in enumerate(attrs)}
        self.getters = getters  # [(fused slot, op index, input slot)]
        self.links = links  # [(op index, input slot, previous op's output slot)]
        self.outs = outs  # [(output slot, fused slot)] per op


def _run(tracer: Any, kind: _Kind, ops: list) -> bool:
    """Run the chain as ``kind``'s kernel and record its ops; False (nothing done) when an
    input is not a plain array or the ops are not linked as ``kind`` says."""
    for k, slot, prev in kind.links:
        if ops[k][1][slot][0] is not ops[k - 1][2][prev][0]:
            return False
    inputs = {}
    for fslot, k, slot in kind.getters:
        x = ops[k][1][slot][0]._value
        if x.__class__ is not np.ndarray:
            return False
        inputs[fslot] = x
    res = call_fused(kind.kernel, inputs, kind.fattrs, f"fused op '{kind.name}'")
    for k, (type_, ins, outs, _a) in enumerate(ops):
        slot, fslot = kind.outs[k]
        grad = False
        for vs in ins.values():
            if not vs[0].stop_gradient:
                grad = True
                break
        tracer._outputs(kind.infos[k], type_, ins, outs, kind.attrs[k], {slot: res[fslot]}, grad)
    return True


def _kind(tracer: Any, fusion: Any, ops: list) -> _Kind | None:
    """The resolved kind of this chain (cached per fusion, slots, attrs and dtype), or None
    when the fusion does not take it."""
    first = ops[0][1]
    x = next(iter(first.values()))[0]._value if first else None
    if x.__class__ is not np.ndarray or (len(ops) == 2 and x.size < SMALL_CHAIN):
        return None
    try:
        key = (fusion.name, x.dtype, *[(tuple(i), tuple(o), *a.items()) for _t, i, o, a in ops])
        kinds = tracer.__dict__.setdefault("_chain_kinds", {})
        kind = kinds.get(key, False)
    except TypeError:  # unhashable attrs
        return None
    if kind is False:
        if len(kinds) >= _MAX_KINDS:
            kinds.clear()
        kind = kinds[key] = _resolve(tracer, fusion, ops, x.dtype)
    return kind


def _resolve(tracer: Any, fusion: Any, ops: list, dtype: Any) -> _Kind | None:
    infos, attrs, stand_ins, getters, links, outs = [], [], [], [], [], []
    for k, (type_, ins, outs_k, raw) in enumerate(ops):
        if len(outs_k) != 1 or any(len(vs) != 1 for vs in ins.values()):
            return None
        info = tracer._infos.get(type_) or tracer._info(type_)
        infos.append(info)
        attrs.append(info.complete(raw))
        names = {}
        for slot, vs in ins.items():
            prev = ops[k - 1][2] if k else {}
            linked = [p for p, pvs in prev.items() if pvs[0] is vs[0]]
            if linked:
                links.append((k, slot, linked[0]))
                names[slot] = [f"{k - 1}.{linked[0]}"]
            else:
                getters.append((f"{k}.{slot}", k, slot))
                names[slot] = [f"{k}.{slot}"]
        if k and not any(lk == k for lk, _s, _p in links):
            return None  # not a chain: op k does not read op k-1's output
        (out_slot,) = outs_k
        outs.append((out_slot, f"{k}.{out_slot}"))
        stand_ins.append(Operator(None, type_, names, {out_slot: [f"{k}.{out_slot}"]}, attrs[k]))
    kernel = fusion.make(stand_ins, None)
    if kernel is None:
        return None
    if not fusion.keeps_intermediates and _grads_read_intermediates(tracer, stand_ins, dtype):
        return None
    return _Kind(kernel, fusion.name, infos, attrs, getters, links, outs)


def _grads_read_intermediates(tracer: Any, ops: list, dtype: Any) -> bool:
    """Whether a grad op of the chain reads an intermediate's data (not only its shape)."""
    inner = {n for op in ops[:-1] for n in op.output_arg_names}
    for op in ops:
        info = tracer._infos.get(op.type) or tracer._info(op.type)
        if info.maker is None:
            continue
        ctx = GradContext(
            op.type,
            op.inputs,
            op.outputs,
            op.attrs,
            {s: [n + GRAD_SUFFIX for n in ns] for s, ns in op.inputs.items()},
            {s: [n + GRAD_SUFFIX for n in ns] for s, ns in op.outputs.items()},
        )
        for desc in info.maker(ctx):
            try:
                entry = tracer._kernel(tracer._info(desc.type), dtype)
            except OarError:  # no grad kernel for this dtype: the unfused path reports it
                return True
            for slot, names in desc.inputs.items():
                if slot not in entry.no_need_buffer and any(
                    n in inner for n in names if n != EMPTY_VAR
                ):
                    return True
    return False


def call_fused(kernel: Any, inputs: dict, attrs: Any, what: str) -> dict:
    """``kernel(inputs, attrs)``; a failure that is not already an oar error becomes one that
    names ``what`` (the fused op or backward) and dygraph mode."""
    try:
        return kernel(inputs, attrs)
    except OarError:
        raise
    except Exception as exc:
        raise OpRuntimeError(f"{what} failed in dygraph mode: {type(exc).__name__}: {exc}") from exc
