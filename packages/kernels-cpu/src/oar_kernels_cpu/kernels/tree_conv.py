"""tree_conv: per-sample window coefficients (host code over the edge lists), then einsums."""

from __future__ import annotations

import numpy as np

from oar_kernels_cpu.kernels import FLOATS, array_module, kernel

xp = array_module(__name__)


def _coefficients(edges, nodes, max_depth, dtype):
    """[B, nodes (root), nodes, 3] window weights (slices: eta_a, eta_b, eta_t)."""
    b = edges.shape[0]
    coef = np.zeros((b, nodes, nodes, 3), dtype)
    count = 0
    kids_per = []
    for s in range(b):
        kids: dict = {}
        for u, v in edges[s]:
            if u > 0 and v > 0:
                kids.setdefault(int(u), []).append(int(v))
                count = max(count, int(u), int(v))
        kids_per.append(kids)
    for s, kids in enumerate(kids_per):
        for root in range(1, min(count, nodes) + 1):
            coef[s, root - 1, root - 1, 2] = 1.0
            frontier, depth = [root], 1
            while frontier and depth < max_depth:
                eta_t = (max_depth - depth) / max_depth
                nxt = []
                for parent in frontier:
                    ch = kids.get(parent, [])
                    for pos, c in enumerate(ch):
                        if c > nodes:
                            continue
                        frac = 0.5 if len(ch) == 1 else pos / (len(ch) - 1)
                        a = (1 - eta_t) * frac
                        coef[s, root - 1, c - 1] += (a, (1 - eta_t) * (1 - a), eta_t)
                        nxt.append(c)
                frontier, depth = nxt, depth + 1
    return xp.asarray(coef)


def _coef(inputs, attrs):
    x = inputs["NodesVector"]
    edges = np.asarray(inputs["EdgeSet"]).astype(np.int64)
    return _coefficients(edges, x.shape[1], attrs["max_depth"], np.dtype(x.dtype))


@kernel("tree_conv", FLOATS, generic=False)
def tree_conv(inputs, attrs):
    c = _coef(inputs, attrs)
    return {"Out": xp.einsum("brjk,bjf,fkoc->broc", c, inputs["NodesVector"], inputs["Filter"])}


@kernel("tree_conv_grad", FLOATS, wants_outputs=True, generic=False)
def tree_conv_grad(inputs, attrs, wanted):
    c, x, w, d = _coef(inputs, attrs), inputs["NodesVector"], inputs["Filter"], inputs["Out@GRAD"]
    res = {}
    if "NodesVector@GRAD" in wanted:
        res["NodesVector@GRAD"] = xp.einsum("brjk,broc,fkoc->bjf", c, d, w)
    if "Filter@GRAD" in wanted:
        res["Filter@GRAD"] = xp.einsum("brjk,bjf,broc->fkoc", c, x, d)
    return res
