"""``fluid.contrib.op_freq_statistic``: how often each op type, and each adjacent pair, occurs."""

from __future__ import annotations

from collections import Counter, OrderedDict
from typing import Any

__all__ = ["op_freq_statistic"]


def op_freq_statistic(program: Any) -> tuple:
    """``(uni_op_freq, adj_2_op_freq)``: OrderedDicts, most frequent first.

    ``adj_2_op_freq`` counts ops that feed the next op of the block (an output of
    the first is an input of the second), keyed ``"op1->op2"``. (Fluid 1.8.5's own
    implementation fails on Python 3: ``OrderedDict.has_key``.)
    """
    from oar.framework.program import Program

    if not isinstance(program, Program):
        raise TypeError(
            f"op_freq_statistic: program must be a Program, given {type(program).__name__}"
        )
    uni: Counter = Counter()
    adj: Counter = Counter()
    for block in program.blocks:
        ops = list(block.ops)
        for op in ops:
            uni[op.type] += 1
        for first, second in zip(ops, ops[1:]):
            if set(first.output_arg_names) & set(second.input_arg_names):
                adj[f"{first.type}->{second.type}"] += 1
    return OrderedDict(uni.most_common()), OrderedDict(adj.most_common())
