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


def trace_chain(tracer: Any, ops: list) -> None:
    """Trace ``ops`` = ``[(type, inputs, outputs, attrs)]``, each op reading the previous
    one's single output, as :meth:`Tracer.trace_op` would one by one."""
    fused = None
    if tracer._recorder is None:
        fusion = tracer._reg.fusions.chain(tracer.device, tuple([op[0] for op in ops]))
        if fusion is not None and not disabled() and _plain(ops):
            fused = _fused(tracer, fusion, ops)
    if fused is None:
        for type_, ins, outs, attrs in ops:
            tracer.trace_op(type_, ins, outs, attrs)
        return
    kernel, infos, attrs_list, name = fused
    inputs = {}
    for k, (_t, ins, _o, _a) in enumerate(ops):
        for slot, vs in ins.items():
            if k == 0 or slot not in infos[k][1]:
                inputs[f"{k}.{slot}"] = vs[0]._value
    try:
        res = kernel(inputs, {str(k): a for k, a in enumerate(attrs_list)})
    except OarError:
        raise
    except Exception as exc:
        raise OpRuntimeError(
            f"fused op '{name}' failed in dygraph mode: {type(exc).__name__}: {exc}"
        ) from exc
    for k, (type_, ins, outs, _a) in enumerate(ops):
        info = infos[k][0]
        grad = any(not v.stop_gradient for vs in ins.values() for v in vs)
        mine = {slot: res[f"{k}.{slot}"] for slot in outs if f"{k}.{slot}" in res}
        tracer._outputs(info, type_, ins, outs, attrs_list[k], mine, grad)


def _plain(ops: list) -> bool:
    """Every input one variable holding a plain array; each op reads the previous one's
    single output."""
    for k, (_t, ins, outs, _a) in enumerate(ops):
        if len(outs) != 1:
            return False
        for vs in ins.values():
            if len(vs) != 1:
                return False
            if k == 0 or vs[0] is not next(iter(ops[k - 1][2].values()))[0]:
                if vs[0]._value.__class__ is not np.ndarray:
                    return False
    return True


def _fused(tracer: Any, fusion: Any, ops: list) -> tuple | None:
    """``(kernel, [(op info, linked input slots)], complete attrs, fusion name)`` for this
    chain, or None when no registered fusion takes it."""
    infos = []
    attrs_list = []
    for k, (type_, ins, _o, attrs) in enumerate(ops):
        info = tracer._infos.get(type_) or tracer._info(type_)
        linked = ()
        if k:
            prev = next(iter(ops[k - 1][2].values()))[0]
            linked = tuple(s for s, vs in ins.items() if vs[0] is prev)
        infos.append((info, linked))
        attrs_list.append(info.complete(attrs))
    first = ops[0][1]
    dtype = next(iter(first.values()))[0]._value.dtype
    key = (
        fusion.name,
        tuple(id(a) for a in attrs_list),
        tuple(tuple(sorted(ins)) for _t, ins, _o, _a in ops),
        tuple(linked for _i, linked in infos),
        dtype,
    )
    kinds = tracer.__dict__.setdefault("_chain_kinds", {})
    kind = kinds.get(key, False)
    if kind is False:
        if len(kinds) >= _MAX_KINDS:
            kinds.clear()
        kind = kinds[key] = _resolve(tracer, fusion, ops, infos, attrs_list, dtype)
    if kind is None:
        return None
    kernel, name, _held = kind
    return kernel, infos, attrs_list, name


def _resolve(
    tracer: Any, fusion: Any, ops: list, infos: list, attrs_list: list, dtype: Any
) -> tuple | None:
    stand_ins = []
    for k, (type_, ins, outs, _a) in enumerate(ops):
        names = {slot: [f"{k}.{slot}"] for slot in ins}
        for slot in infos[k][1]:
            names[slot] = [f"{k - 1}.{next(iter(ops[k - 1][2]))}"]
        out_names = {slot: [f"{k}.{slot}"] for slot in outs}
        stand_ins.append(Operator(None, type_, names, out_names, dict(attrs_list[k])))
    kernel = fusion.make(stand_ins, None)
    if kernel is None:
        return None
    if not fusion.keeps_intermediates and _grads_read_intermediates(tracer, stand_ins, dtype):
        return None
    return kernel, fusion.name, attrs_list  # attrs held: their ids stay in the key


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
            entry = tracer._kernel(tracer._info(desc.type), dtype)
            for slot, names in desc.inputs.items():
                if slot not in entry.no_need_buffer and any(
                    n in inner for n in names if n != EMPTY_VAR
                ):
                    return True
    return False
