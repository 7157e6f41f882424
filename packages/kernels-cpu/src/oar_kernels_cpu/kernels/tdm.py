"""Kernels of tdm_child (a gather of TreeInfo's children columns) and tdm_sampler."""

from __future__ import annotations

from oar.errors import ShapeError

from oar_kernels_cpu.kernels import array_module, kernel
from oar_kernels_cpu.kernels._util import rng_for

xp = array_module(__name__)


@kernel("tdm_child", ("int32", "int64"))
def tdm_child(inputs, attrs):
    x, tree = inputs["X"], inputs["TreeInfo"]
    cn = attrs["child_nums"]
    _check_ids("tdm_child", x, tree.shape[0], "the node ids: rows of TreeInfo")
    dtype = attrs["dtype"]
    child = tree[x, 3 : 3 + cn] * (x != 0)[..., None]
    leaf = (tree[child, 0] != 0) & (child != 0)
    return {"Child": child.astype(dtype), "LeafMask": leaf.astype(dtype)}


def _check_ids(op: str, x, rows: int, what: str) -> None:
    if x.size and (int(x.min()) < 0 or int(x.max()) >= rows):
        raise ShapeError(
            f"{op}: ids in X must be in [0, {rows}) ({what}), given ids from {int(x.min())} "
            f"to {int(x.max())}"
        )


@kernel("tdm_sampler", ("int32", "int64"))
def tdm_sampler(inputs, attrs):
    x = inputs["X"].reshape(-1)
    travel, nodes_all = inputs["Travel"], inputs["Layer"].reshape(-1)
    _check_ids("tdm_sampler", x, travel.shape[0], "the rows of Travel")
    negs, offsets = attrs["neg_samples_num_list"], attrs["layer_offset_lod"]
    positive = bool(attrs["output_positive"])
    rng = rng_for(xp, attrs["seed"])
    parts: list = []
    for layer, n in enumerate(negs):
        nodes = nodes_all[offsets[layer] : offsets[layer + 1]]
        pos = travel[x, layer]
        valid = (pos != 0)[:, None]
        if positive:
            parts.append((pos[:, None], valid, valid))
        if n:
            keys = rng.random((x.shape[0], nodes.shape[0]))
            keys = xp.where(nodes[None, :] == pos[:, None], 2.0, keys)  # never the positive
            neg = nodes[xp.argsort(keys, axis=1)[:, :n]] * valid
            parts.append((neg, xp.zeros_like(neg, dtype=bool), xp.broadcast_to(valid, neg.shape)))
    dtype = attrs["dtype"]
    if not parts:
        empty = xp.zeros((x.shape[0], 0), dtype)
        return {"Out": empty, "Labels": empty, "Mask": empty}
    out, labels, mask = (
        xp.concatenate([p[k] for p in parts], axis=1).astype(dtype) for k in range(3)
    )
    return {"Out": out, "Labels": labels, "Mask": mask}
