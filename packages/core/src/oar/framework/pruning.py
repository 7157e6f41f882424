"""Pruning a program down to the ops its targets need (used for inference models)."""

from __future__ import annotations

from typing import Any


def prune_to_targets(program: Any, targets: list, feeds: list | None = None) -> Any:
    """A clone of ``program`` whose block 0 keeps only ops that ``targets`` depend on.

    Ops that only produce ``feeds`` are dropped too, so the pruned program
    needs nothing but the feeds and persistables; an op that updates a fed
    variable in place (reads and writes it, like a loop over a fed value)
    is kept. Sub-blocks stay as they are: a kept ``while`` or
    ``conditional_block`` op lists every outside variable its body reads.
    """
    names = {t if isinstance(t, str) else t.name for t in targets}
    feed_names = set(feeds or ())
    p = program.clone()
    block = p.global_block()
    needed = set(names)
    keep = []
    for op in reversed(block.ops):
        outs = set(op.output_arg_names)
        wanted = outs & needed
        ins = set(op.input_arg_names)
        if wanted and not (outs <= feed_names and not wanted & ins):
            keep.append(op)
            needed |= ins
    keep.reverse()
    block.ops = keep
    used = {n for op in keep for n in op.input_arg_names + op.output_arg_names} | names | feed_names
    for name in list(block.vars):
        if name not in used:
            del block.vars[name]
    p._bump()
    return p
