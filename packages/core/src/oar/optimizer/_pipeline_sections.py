"""Cutting a trained program into pipeline stages (used by ``PipelineOptimizer``).

Forward ops are cut into stages at ``cut_list`` variables (a stage ends with the op that
completes a cut) or, without a cut list, wherever ``device_guard``'s ``op_device`` attribute
changes. Each backward op joins the stage whose forward ops consume the variables it
differentiates, and the stages of the backward ops never increase along the program: a
micro-batch's backward pass then runs from the last stage to the first and every op finds
its inputs. Optimize and learning-rate ops form one more section, run once per batch.
"""

from __future__ import annotations

from typing import Any

import attrs as _attrs

from oar.framework.operator import OpRole

_TRAIN = OpRole.Backward | OpRole.Optimize | OpRole.LRSched
_UPDATE = OpRole.Optimize | OpRole.LRSched


@_attrs.define
class Sections:
    """Programs cut from one trained program, and the variables that cross between them."""

    forward: list  # one Program per stage (None where the stage has no ops)
    backward: list
    update: Any  # the optimize/LR section, or None
    reads: dict  # id(section program) -> names its ops read
    grads: tuple  # variables the update section reads from the backward sections
    stateful: tuple  # persistables the forward/backward sections write (batch_norm stats)
    num_stages: int


def _role(op) -> int:
    return int(op.attrs.get("op_role", 0))


def _forward_stages(fwd_ops: list, cut_names: list | None) -> list:
    """Stage index of each forward op (0-based, consecutive, none empty)."""
    stages = []
    if cut_names:
        produced: set = set()
        stage = 0
        for op in fwd_ops:
            stages.append(stage)
            produced.update(op.output_arg_names)
            while stage < len(cut_names) and set(cut_names[stage]) <= produced:
                stage += 1
    else:
        devices: list = []
        for op in fwd_ops:
            dev = op.attrs.get("op_device") or (devices[-1] if devices else None)
            if not devices or dev != devices[-1]:
                devices.append(dev)
            stages.append(len(devices) - 1)
    # renumber: drop empty stages (a cut at the loss adds none)
    order = {s: i for i, s in enumerate(sorted(set(stages)))}
    return [order[s] for s in stages]


def _backward_stages(bwd_ops: list, fwd_ops: list, fwd_stage: list, last: int) -> list:
    consumer: dict = {}
    producer: dict = {}
    for op, s in zip(fwd_ops, fwd_stage):
        for n in op.input_arg_names:
            consumer[n] = max(consumer.get(n, s), s)
        for n in op.output_arg_names:
            producer.setdefault(n, s)

    def stage_of(name: str) -> int:
        base = name.split("@GRAD")[0]
        if base in consumer:
            return consumer[base]
        return producer.get(base, last)

    stages = []
    current = last
    for op in bwd_ops:
        outs = [n for n in op.output_arg_names if "@GRAD" in n]
        want = min((stage_of(n) for n in outs), default=current)
        current = min(current, want)
        stages.append(current)
    return stages


def _section(program: Any, keep: set) -> Any:
    """A copy of ``program`` with only the ops at the indices in ``keep`` (None if empty).

    Every variable its ops write becomes persistable in the copy, so the run writes it back
    to the micro-batch's scope where the next section finds it.
    """
    if not keep:
        return None
    sec = program.clone()
    block = sec.global_block()
    for i in range(len(block.ops) - 1, -1, -1):
        if i not in keep:
            block._remove_op(i)
    for op in block.ops:
        for n in op.output_arg_names:
            v = block.vars.get(n)
            if v is not None:
                v.persistable = True
    return sec


def split_program(program: Any, cut_names: list | None) -> Sections:
    """Cut ``program`` (forward, backward and update ops, in order) into pipeline sections."""
    block = program.global_block()
    ops = block.ops
    fwd = [i for i, op in enumerate(ops) if not _role(op) & _TRAIN]
    bwd = [i for i, op in enumerate(ops) if _role(op) & OpRole.Backward and not _role(op) & _UPDATE]
    upd = [i for i, op in enumerate(ops) if _role(op) & _UPDATE]
    fwd_stage = _forward_stages([ops[i] for i in fwd], cut_names)
    n = max(fwd_stage, default=0) + 1
    bwd_stage = _backward_stages([ops[i] for i in bwd], [ops[i] for i in fwd], fwd_stage, n - 1)
    forward = [_section(program, {i for i, s in zip(fwd, fwd_stage) if s == k}) for k in range(n)]
    backward = [_section(program, {i for i, s in zip(bwd, bwd_stage) if s == k}) for k in range(n)]
    update = _section(program, set(upd))
    reads = {}
    for sec in forward + backward + [update]:
        if sec is not None:
            reads[id(sec)] = {x for op in sec.global_block().ops for x in op.input_arg_names}
    written = {x for i in fwd + bwd for x in ops[i].output_arg_names}
    upd_reads = reads.get(id(update), set())
    persistable = {name for name, v in block.vars.items() if v.persistable}
    return Sections(
        forward,
        backward,
        update,
        reads,
        grads=tuple(sorted(upd_reads & written - persistable)),
        stateful=tuple(sorted(written & persistable)),
        num_stages=n,
    )
