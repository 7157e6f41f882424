"""hierarchical_sigmoid: gather the path's node vectors, one batched dot, scatter the grads."""

from __future__ import annotations

from oar_kernels_cpu.kernels import FLOATS, array_module, kernel
from oar_kernels_cpu.kernels._util import scatter_add

xp = array_module(__name__)


def _paths(inputs, attrs):
    """(node ids [N, L] clipped to >= 0, bits [N, L], valid mask [N, L])."""
    lab = inputs["Label"].reshape(-1).astype("int64")
    if inputs.get("PathTable") is not None:
        table = inputs["PathTable"].astype("int64")
        code = inputs["PathCode"].astype("int64")
        # a path ends at its first negative id
        valid = xp.cumprod(table >= 0, axis=1).astype(bool)
        return xp.where(valid, table, 0), xp.where(valid, code, 0), valid
    c = attrs["num_classes"]
    length = max(int(c - 1).bit_length(), 1)
    leaf = (lab + c)[:, None]
    j = xp.arange(length)[None, :]
    node = (leaf >> (j + 1)) - 1
    bits = (leaf >> j) & 1
    valid = node >= 0
    return xp.where(valid, node, 0), bits, valid


def _pre(inputs, node, valid):
    x, w = inputs["X"], inputs["W"]
    pre = xp.einsum("nd,nld->nl", x, w[node])
    if inputs.get("Bias") is not None:
        pre = pre + inputs["Bias"].reshape(-1)[node]
    return xp.clip(pre, -40.0, 40.0) * valid


@kernel("hierarchical_sigmoid", FLOATS)
def hierarchical_sigmoid(inputs, attrs):
    node, bits, valid = _paths(inputs, attrs)
    pre = _pre(inputs, node, valid)
    # as Fluid: the padded steps (pre = 0) of a shorter path add log(2) each
    loss = xp.logaddexp(0, pre) - bits * pre * valid
    x = inputs["X"]
    return {
        "Out": loss.sum(axis=1, keepdims=True).astype(x.dtype, copy=False),
        "PreOut": pre.astype(x.dtype, copy=False),
    }


@kernel("hierarchical_sigmoid_grad", FLOATS, wants_outputs=True)
def hierarchical_sigmoid_grad(inputs, attrs, wanted):
    x, w = inputs["X"], inputs["W"]
    node, bits, valid = _paths(inputs, attrs)
    pre = _pre(inputs, node, valid)
    inside = xp.abs(pre) < 40.0
    dpre = (1.0 / (1.0 + xp.exp(-pre)) - bits) * valid * inside * inputs["Out@GRAD"].reshape(-1, 1)
    dpre = dpre.astype(x.dtype, copy=False)
    res = {}
    if "X@GRAD" in wanted:
        res["X@GRAD"] = xp.einsum("nl,nld->nd", dpre, w[node])
    if "W@GRAD" in wanted:
        gw = xp.zeros_like(w)
        scatter_add(
            xp, gw, node.reshape(-1), (dpre[:, :, None] * x[:, None, :]).reshape(-1, x.shape[1])
        )
        res["W@GRAD"] = gw
    if "Bias@GRAD" in wanted and inputs.get("Bias") is not None:
        gb = xp.zeros(inputs["Bias"].shape[0], x.dtype)
        scatter_add(xp, gb, node.reshape(-1), dpre.reshape(-1))
        res["Bias@GRAD"] = gb.reshape(inputs["Bias"].shape)
    return res
