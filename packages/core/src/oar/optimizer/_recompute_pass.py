"""The program pass behind RecomputeOptimizer: forward segments recomputed in backward.

After ``append_backward``, each forward segment that ends at a checkpoint is cloned right
before the first backward op that reads one of its intermediates, writing renamed copies
(``<name>@RECOMPUTE``) that the backward ops then read instead. The executor frees every
temporary after its last use, so the original intermediates die during the forward pass
and only the checkpoints live until backward: peak memory drops.

Not cloned (their outputs are kept instead): random ops (a second draw would differ) and
ops that write persistable variables (batch_norm's moving statistics would move twice).
"""

from __future__ import annotations

from typing import Any

from oar.framework.operator import OpRole

RANDOM_OPS = frozenset(
    {
        "dropout",
        "uniform_random",
        "gaussian_random",
        "truncated_gaussian_random",
        "sampling_id",
        "random_crop",
        "randperm",
        "uniform_random_batch_size_like",
        "gaussian_random_batch_size_like",
        "nce",
        "sample_logits",
        "py_func",
    }
)
SUFFIX = "@RECOMPUTE"


def _is_backward(op: Any) -> bool:
    return bool(int(op.attrs.get("op_role", 0)) & OpRole.Backward)


def _writes_persistable(block: Any, op: Any) -> bool:
    for n in op.output_arg_names:
        v = block._find_var_recursive(n)
        if v is not None and v.persistable:
            return True
    return False


def _segments(fwd: list, checkpoints: set) -> list:
    producer = {}
    for i, op in enumerate(fwd):
        for n in op.output_arg_names:
            producer[n] = i
    ends = sorted({producer[c] for c in checkpoints if c in producer})
    starts = [0] + [e + 1 for e in ends[:-1]]
    return [(s, e) for s, e in zip(starts, ends) if s <= e]


def apply_recompute(block: Any, loss_name: str, checkpoints: list) -> int:
    """Rewrite ``block`` in place; returns the number of forward ops cloned."""
    ops = block.ops
    first_bwd = next((i for i, op in enumerate(ops) if _is_backward(op)), len(ops))
    fwd = ops[:first_bwd]
    ckpt = set(checkpoints)
    cloned = 0
    for start, end in reversed(_segments(fwd, ckpt)):
        seg = [
            op
            for op in fwd[start : end + 1]
            if op.type not in RANDOM_OPS and not _writes_persistable(block, op)
        ]
        inter = {
            n
            for op in seg
            for n in op.output_arg_names
            if n not in ckpt and n != loss_name and not block._var_recursive(n).persistable
        }
        users = [
            i for i in range(first_bwd, len(block.ops)) if set(block.ops[i].input_arg_names) & inter
        ]
        if not users:
            continue
        rename = {}
        for op in seg:
            for n in op.output_arg_names:
                if n not in rename:
                    v = block._var_recursive(n)
                    rename[n] = n + SUFFIX
                    if not block.has_var(rename[n]):
                        block.create_var(
                            name=rename[n],
                            shape=v.shape,
                            dtype=v.dtype,
                            lod_level=v.lod_level,
                            stop_gradient=True,
                        )
        at = users[0]
        for k, op in enumerate(seg):
            ins = {
                s: [rename.get(n, n) if n in inter else n for n in ns]
                for s, ns in op.inputs.items()
            }
            outs = {s: [rename.get(n, n) for n in ns] for s, ns in op.outputs.items()}
            attrs = {**op.attrs, "op_role": OpRole.Backward}
            block._insert_op(at + k, op.type, ins, outs, attrs, infer=False, callsite=op.callsite)
        cloned += len(seg)
        for i in range(at + len(seg), len(block.ops)):
            op = block.ops[i]
            if not _is_backward(op):
                continue
            for s, ns in op.inputs.items():
                op.inputs[s] = [rename[n] if n in inter else n for n in ns]
        block.program._bump()
    return cloned
