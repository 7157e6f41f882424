"""tree_conv: per-sample window coefficients (host code over the edge lists), then matrix
products through :mod:`._gemm` (oar's thread settings, ``FLAGS_cpu_deterministic``).

Shapes: coefficients C [B, N (root), N, 3], nodes X [B, N, F], filter W [F, 3, O, K];
Out[b, r, o, k] = sum over j, t, f of C[b, r, j, t] X[b, j, f] W[f, t, o, k], computed as
T = C' X per sample (C' = C as [B, N * 3, N]) and Out = T W' (W' = W as [3 * F, O * K]).
"""

from __future__ import annotations

import numpy as np

from oar_kernels_cpu.kernels import FLOATS, _gemm, array_module, kernel

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


def _products(inputs, attrs):
    """(C' [B, N * 3, N], T = C' X as [B * N, 3 * F], W' [3 * F, O * K])."""
    c, x, w = _coef(inputs, attrs), inputs["NodesVector"], inputs["Filter"]
    b, n = c.shape[:2]
    ct = xp.ascontiguousarray(c.transpose(0, 1, 3, 2)).reshape(b, n * 3, n)
    t = _gemm.matmul(xp, ct, x).reshape(b * n, 3 * x.shape[2])
    w2 = xp.ascontiguousarray(w.transpose(1, 0, 2, 3)).reshape(3 * w.shape[0], -1)
    return ct, t, w2


@kernel("tree_conv", FLOATS, generic=False)
def tree_conv(inputs, attrs):
    _, t, w2 = _products(inputs, attrs)
    b, n = inputs["NodesVector"].shape[:2]
    out = _gemm.matmul(xp, t, w2).reshape((b, n) + inputs["Filter"].shape[2:])
    return {"Out": out}


@kernel("tree_conv_grad", FLOATS, wants_outputs=True, generic=False)
def tree_conv_grad(inputs, attrs, wanted):
    ct, t, w2 = _products(inputs, attrs)
    x, w = inputs["NodesVector"], inputs["Filter"]
    b, n = x.shape[:2]
    d = inputs["Out@GRAD"].reshape(b * n, -1)
    dt, dw = _gemm.matmuls(xp, [(d, w2.T), (t.T, d)])
    res = {}
    if "NodesVector@GRAD" in wanted:
        dt = dt.reshape(b, n * 3, x.shape[2])
        res["NodesVector@GRAD"] = _gemm.matmul(xp, ct.transpose(0, 2, 1), dt)
    if "Filter@GRAD" in wanted:
        dw = dw.reshape((3, w.shape[0]) + w.shape[2:]).transpose(1, 0, 2, 3)
        res["Filter@GRAD"] = xp.ascontiguousarray(dw)
    return res
