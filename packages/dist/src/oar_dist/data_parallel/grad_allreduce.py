"""The program pass of data parallelism: all-reduce parameter gradients, scale the loss gradient.

Used by ``with_data_parallel`` (on a clone of the user's program) and by the
``collective`` transpiler (on the user's program itself), so both carry the
same explicit communication: after the backward ops and before the first
optimizer op, one ``c_allreduce_sum`` per gradient, or one
``c_fused_allreduce_sum`` per bucket of gradients (``fuse_all_reduce_ops``),
then ``c_sync_comm_stream``.
"""

from __future__ import annotations

from oar.api import OpRole

from oar_dist.collective.base import DEFAULT_BUCKET_BYTES

# BuildStrategy.GradientScaleStrategy values (Fluid's)
COEFF_NUM_DEVICE, ONE, CUSTOMIZED = 0, 1, 2

_ITEMSIZE = {"float16": 2, "float32": 4, "float64": 8, "int32": 4, "int64": 8}


def _role(op) -> int:
    return int(op.attrs.get("op_role", 0))


def param_grads(block) -> list:
    """``(parameter, gradient name)`` for each trainable parameter a backward op writes a gradient of,
    in the order the backward pass finishes them. Gradients that a ``dgc`` op encodes are left
    out: DGC exchanges their sparse top-k itself (``c_allgather``)."""
    sparse = {n for op in block.ops if op.type == "dgc" for n in op.inputs.get("Grad", ())}
    last_writer: dict = {}
    for i, op in enumerate(block.ops):
        if _role(op) & OpRole.Backward:
            for names in op.outputs.values():
                for n in names:
                    last_writer[n] = i
    pairs = []
    for p in block.all_parameters():
        g = p.name + "@GRAD"
        if getattr(p, "trainable", True) and g in last_writer and g not in sparse:
            pairs.append((last_writer[g], p, g))
    pairs.sort(key=lambda t: t[0])
    return [(p, g) for _, p, g in pairs]


def _nbytes(var) -> int:
    n = 1
    for d in var.shape or ():
        n *= max(int(d), 1)
    return n * _ITEMSIZE.get(str(var.dtype), 4)


def _buckets(block, grads: list, bucket_bytes: int) -> list:
    out: list = []
    cur: list = []
    size = 0
    dtype = None
    for g in grads:
        var = block.var(g)
        nb = _nbytes(var)
        if cur and (var.dtype != dtype or size + nb > bucket_bytes):
            out.append(cur)
            cur, size = [], 0
        cur.append(g)
        size += nb
        dtype = var.dtype
    if cur:
        out.append(cur)
    return out


def scale_loss_grad(block, loss_name: str | None, strategy: int, nranks: int) -> None:
    """Apply ``gradient_scale_strategy`` to the op that seeds ``loss@GRAD``.

    ``loss_name=None`` takes the first op that seeds a loss gradient (op role
    Backward|Loss), as Fluid's collective transpiler does.

    CoeffNumDevice: the seed becomes 1/nranks, so summing the ranks' gradients
    gives their mean. One: left at 1 (the sum). Customized: the seed op is
    removed and each device is fed ``loss@GRAD`` (as in Fluid).
    """
    target = None if loss_name is None else loss_name + "@GRAD"
    for i, op in enumerate(block.ops):
        if not (_role(op) & OpRole.Loss and _role(op) & OpRole.Backward):
            continue
        if target is None or target in op.outputs.get("Out", ()):
            if strategy == COEFF_NUM_DEVICE:
                op.attrs["value"] = float(op.attrs.get("value", 1.0)) / nranks
            elif strategy == CUSTOMIZED:
                block._remove_op(i)
            elif strategy != ONE:
                raise ValueError(
                    f"BuildStrategy.gradient_scale_strategy must be CoeffNumDevice (0), One (1) or "
                    f"Customized (2), given {strategy!r}"
                )
            block.program._bump()
            return
    # the loss was not differentiated in this program (a test program): nothing to scale


def insert_grad_allreduce(
    program,
    loss_name: str | None,
    nranks: int,
    scale_strategy: int = COEFF_NUM_DEVICE,
    ring_id: int = 0,
    fuse: bool = True,
    bucket_bytes: int = DEFAULT_BUCKET_BYTES,
    scale_loss: bool | None = None,
) -> list:
    """Insert the gradient all-reduce into ``program`` (in place); returns the gradient names.

    The loss gradient is scaled when ``scale_loss`` (default: when ``loss_name``
    is given, as Fluid's ParallelExecutor; the transpiler scales whichever loss
    the program differentiates).
    """
    block = program.global_block()
    if scale_loss if scale_loss is not None else loss_name is not None:
        scale_loss_grad(block, loss_name, scale_strategy, nranks)
    grads = [g for _, g in param_grads(block)]
    if not grads:
        return []
    last_grad_op = max(
        i
        for i, op in enumerate(block.ops)
        if _role(op) & OpRole.Backward and any(g in op.output_arg_names for g in grads)
    )
    at = last_grad_op + 1
    with program._role_guard(OpRole.Backward):
        groups = _buckets(block, grads, bucket_bytes) if fuse else [[g] for g in grads]
        for group in groups:
            if len(group) == 1:
                block._insert_op(
                    at,
                    "c_allreduce_sum",
                    {"X": group},
                    {"Out": group},
                    {"ring_id": ring_id, "use_calc_stream": True},
                )
            else:
                block._insert_op(
                    at,
                    "c_fused_allreduce_sum",
                    {"X": group},
                    {"Out": group},
                    {"ring_id": ring_id, "use_calc_stream": True},
                )
            at += 1
        block._insert_op(
            at, "c_sync_comm_stream", {"X": grads}, {"Out": grads}, {"ring_id": ring_id}
        )
    return grads
