"""Passes that simplify: dead ops, dropout in test mode, constant folding."""

from __future__ import annotations

import numpy as np

from oar_deploy.passes.graph import PassContext

# ops whose result is not a function of their inputs, or that act on the outside world
IMPURE = frozenset(
    {
        "feed",
        "fetch",
        "read",
        "print",
        "py_func",
        "uniform_random",
        "gaussian_random",
        "truncated_gaussian_random",
        "uniform_random_batch_size_like",
        "gaussian_random_batch_size_like",
        "randint",
        "randperm",
        "sampling_id",
        "random_crop",
        "bernoulli",
        "multinomial",
        "send",
        "recv",
        "listen_and_serv",
        "barrier",
        "save",
        "load",
        "save_combine",
        "load_combine",
        "while",
        "conditional_block",
        "recurrent",
    }
)


def dead_op_elimination(ctx: PassContext) -> int:
    """Drop ops none of whose outputs lead to a fetch target (backward liveness)."""
    needed = set(ctx.fetches)
    dead = []
    for op in reversed(ctx.block.ops):
        outs = op.output_arg_names
        if op.type in IMPURE or not outs or any(n in needed for n in outs):
            needed.update(op.input_arg_names)
        else:
            dead.append(op)
    ctx.remove_ops(dead)
    return len(dead)


def dropout_removal(ctx: PassContext) -> int:
    """Test-mode dropout becomes nothing (upscale_in_train) or a ``scale`` by 1 - p.

    Fluid's ``simplify_with_basic_ops_pass``. The ``Mask`` output is never read by
    an inference program; when the dropout's output is itself a fetch target
    it is kept as the output of a ``scale`` op.
    """
    n = 0
    for op in list(ctx.block.ops):
        if op.type != "dropout" or not op.attr("is_test"):
            continue
        x, out = op.input("X")[0], op.output("Out")[0]
        if op.attr("dropout_implementation") == "upscale_in_train":
            factor = 1.0
        else:
            factor = 1.0 - float(op.attr("dropout_prob") or 0.0)
        mask = op.output("Mask")
        if any(m in ctx.kept() for m in mask):
            continue
        if factor == 1.0 and out not in ctx.kept() and x not in ctx.kept():
            ctx.remove_ops([op])
            ctx.rename_input_everywhere(out, x)
        elif out not in ctx.kept() and _scale_next_weight(ctx, out, x, factor):
            ctx.remove_ops([op])
        else:
            ctx.replace_op(
                [op],
                "scale",
                {"X": [x]},
                {"Out": [out]},
                {"scale": factor, "bias": 0.0, "bias_after_scale": True},
            )
        n += 1
    return n


def _scale_next_weight(ctx: PassContext, out: str, x: str, factor: float) -> bool:
    """``mul(x * f, W)`` is ``mul(x, W * f)``: scale the next layer's weight instead."""
    nxt = ctx.only_consumer(out, ctx.consumers())
    if nxt is None or nxt.type not in ("mul", "fc"):
        return False
    x_slot, w_slot = ("X", "Y") if nxt.type == "mul" else ("Input", "W")
    if nxt.input(x_slot) != [out]:
        return False
    w_name = nxt.input(w_slot)[0]
    w = ctx.param(w_name)
    if w is None:
        return False
    nxt._rename_input(w_name, ctx.new_param(w_name, (w * factor).astype(w.dtype)))
    nxt._rename_input(out, x)
    return True


def constant_folding(ctx: PassContext) -> int:
    """Ops computed from parameters and constants alone run once now; their results become parameters.

    A foldable op reads only persistable variables or outputs of other foldable
    ops (``fill_constant`` and friends read nothing), is pure (not random, not
    I/O) and writes no persistable. The outputs that unfoldable ops (or the
    fetch list) read are computed with an Executor on the predictor's scope and
    stored as new persistable variables; the folded ops are removed.
    """
    from oar.api import Executor

    block = ctx.block
    feeds = set(ctx.feeds)
    known: set = set()
    folded: list = []
    for op in block.ops:
        if op.type in IMPURE or not op.output_arg_names:
            continue
        ins = op.input_arg_names
        if any(n in feeds for n in ins):
            continue
        if not all(n in known or ctx.param(n) is not None for n in ins):
            continue
        if any(ctx.is_persistable(n) for n in op.output_arg_names):
            continue
        folded.append(op)
        known.update(op.output_arg_names)
    if not folded:
        return 0
    folded_ids = {id(op) for op in folded}
    wanted = sorted(
        {
            n
            for op in block.ops
            if id(op) not in folded_ids
            for n in op.input_arg_names
            if n in known
        }
        | (known & set(ctx.fetches))
    )
    values: list = []
    if wanted:
        probe = ctx.program.clone()
        pblock = probe.global_block()
        keep = [i for i, op in enumerate(block.ops) if id(op) in folded_ids]
        kept_ops = [pblock.ops[i] for i in keep]
        pblock._remove_op(0, len(pblock.ops))
        pblock.ops.extend(kept_ops)
        probe._bump()
        values = Executor().run(probe, feed={}, fetch_list=wanted, scope=ctx.scope)
    for name, value in zip(wanted, values):
        var = block._find_var_recursive(name)
        var.persistable = True
        ctx.scope.var(name).get_tensor().set(np.asarray(value))
    ctx.remove_ops(folded)
    return len(folded)
