"""numpy kernel of gather_tree: one backward pass over time, all beams at once."""

from __future__ import annotations

from oar.errors import ShapeError

from oar_kernels_cpu.kernels import array_module, kernel

xp = array_module(__name__)


@kernel("gather_tree", ("int32", "int64"))
def gather_tree(inputs, attrs):
    ids, parents = inputs["Ids"], inputs["Parents"]
    steps, batch, beam = ids.shape
    if parents.size and (parents.min() < 0 or parents.max() >= beam):
        raise ShapeError(f"gather_tree: Parents must be beam indices in [0, {beam})")
    out = xp.empty_like(ids)
    if not steps:
        return {"Out": out}
    rows = xp.arange(batch)[:, None]
    beams = xp.broadcast_to(xp.arange(beam), (batch, beam))
    for t in range(steps - 1, -1, -1):
        out[t] = ids[t][rows, beams]
        beams = parents[t][rows, beams]
    return {"Out": out}
