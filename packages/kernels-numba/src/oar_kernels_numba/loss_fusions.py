"""Fused kernels for a classifier's loss: ``mean(cross_entropy(softmax(x + b), label))``
forward in one step, and its gradient down to the bias in one pass.

Forward (``elementwise_add`` + ``softmax`` + ``cross_entropy`` + ``mean``, hard labels,
softmax over the last axis of a 2-D input): one compiled pass adds the bias and shifts
each row by its max, numpy's vectorised ``exp`` runs in place, a second compiled pass
normalises the rows and takes each row's loss, and numpy's sum gives the mean. Every
output is a real array (the backward reads the softmax), so the fusion is registered
with ``keeps_intermediates``. The row sums add left to right (numpy's are pairwise):
within float tolerance of the unfused kernels; everything else does their float
operations.

Backward (``mean_grad`` + ``cross_entropy_grad`` + ``softmax_grad``, optionally led by
the ``fill_constant`` that seeds the loss gradient and followed by the bias's
``elementwise_add_grad``): one pass writes dz (bit for bit the unfused kernels') and,
with the bias, its column sums.

Shapes, dtypes or labels the loops do not cover go through the ops' registered kernels
(which raise the errors, such as a class id out of range).
"""

from __future__ import annotations

import numpy as np
from oar.api import registries, shape_stand_in

from oar_kernels_numba.compat import load_numba

FLOAT_DTYPES = frozenset(np.dtype(t) for t in ("float32", "float64"))
_NO_BIAS = {np.dtype(t): np.empty(0, t) for t in ("float32", "float64")}


def _call(entry, ins, attrs, wanted=frozenset({"X@GRAD"})):
    if entry.inplace:
        return entry.kernel(ins, attrs, donated=frozenset())
    return entry.kernel(ins, attrs, wanted) if entry.wants_outputs else entry.kernel(ins, attrs)


def _kernel(op: str, device: str, dtype) -> object:
    return registries().kernels.lookup(op, device, dtype.name)  # cached by the registry


# --- forward ---------------------------------------------------------------------------------


def _unfused_loss(inputs, attrs, device):
    x = inputs["0.X"]
    z = _call(_kernel("elementwise_add", device, x.dtype), {"X": x, "Y": inputs["0.Y"]},
              attrs["0"])["Out"]  # fmt: skip
    sm = _call(_kernel("softmax", device, z.dtype), {"X": z}, attrs["1"])["Out"]
    ins = {"X": sm, "Label": inputs["2.Label"]}
    ce = _call(_kernel("cross_entropy", device, sm.dtype), ins, attrs["2"])["Y"]
    loss = _call(_kernel("mean", device, ce.dtype), {"X": ce}, attrs["3"])["Out"]
    return {"0.Out": z, "1.Out": sm, "2.Y": ce, "3.Out": loss}


def _covered(x, b, lab) -> bool:
    return (
        type(x) is np.ndarray
        and x.ndim == 2
        and x.size > 0
        and x.dtype in FLOAT_DTYPES
        and x.flags.c_contiguous
        and type(b) is np.ndarray
        and b.dtype == x.dtype
        and b.shape == (x.shape[1],)
        and b.flags.c_contiguous
        and type(lab) is np.ndarray
        and lab.dtype.kind in "iu"
        and lab.shape == (x.shape[0], 1)
    )


def make_softmax_loss(device: str):
    """``elementwise_add`` + ``softmax`` + ``cross_entropy`` + ``mean``: an fc classifier's
    logits, probabilities, per-row losses and mean loss in one step."""

    def make(ops, block):
        add, sm, ce, mean = ops
        if add.attrs.get("axis", -1) not in (-1, 1) or sm.attrs.get("axis", -1) not in (-1, 1):
            return None
        if ce.attrs.get("soft_label") or ce.input("X") != sm.output("Out"):
            return None
        if mean.input("X") != ce.output("Y") or sm.input("X") != add.output("Out"):
            return None
        if load_numba() is None:
            return None
        from oar_kernels_numba._fused_loops import bias_shift_rows, normalise_ce_rows

        def softmax_loss(inputs, attrs):
            x, b, lab = inputs["0.X"], inputs["0.Y"], inputs["2.Label"]
            if not _covered(x, b, lab):
                return _unfused_loss(inputs, attrs, device)
            z = np.empty_like(x)
            p = np.empty_like(x)
            bias_shift_rows(x, b, z, p)
            np.exp(p, out=p)
            ce = np.empty((x.shape[0], 1), x.dtype)
            lab1 = lab.reshape(-1).astype(np.int64, copy=False)
            tiny = np.finfo(x.dtype).tiny
            if not normalise_ce_rows(p, lab1, attrs["2"]["ignore_index"], tiny, ce.reshape(-1)):
                return _unfused_loss(inputs, attrs, device)  # raises the numpy error
            loss = np.empty(1, x.dtype)  # the mean kernel's float operations
            loss[0] = np.add.reduce(ce, axis=None, dtype=ce.dtype) / ce.size
            return {"0.Out": z, "1.Out": p, "2.Y": ce, "3.Out": loss}

        return softmax_loss

    return make


# --- backward --------------------------------------------------------------------------------


def _upstream(inputs, attrs, lead: int):
    """The loss gradient the chain starts from: the fed ``Out@GRAD``, or the
    ``fill_constant`` that leads the chain (its value in its dtype)."""
    if not lead:
        return inputs["0.Out@GRAD"]
    a = attrs["0"]
    value = a.get("str_value") or a["value"]
    out = np.empty([int(d) for d in a["shape"]], dtype=a["dtype"])
    out.fill(float(value) if isinstance(value, str) else value)
    return out


def _unfused_loss_grad(inputs, attrs, device, lead=0, bias=False):
    p = inputs[f"{lead + 1}.X"]
    d = _upstream(inputs, attrs, lead)
    m, c, s = (str(lead + i) for i in range(3))
    d0 = _call(_kernel("mean_grad", device, p.dtype), {"X": inputs[f"{m}.X"], "Out@GRAD": d},
               attrs[m])  # fmt: skip
    ins = {"X": p, "Label": inputs[f"{c}.Label"], "Y@GRAD": d0["X@GRAD"]}
    d1 = _call(_kernel("cross_entropy_grad", device, p.dtype), ins, attrs[c])
    ins = {"Out": inputs[f"{s}.Out"], "Out@GRAD": d1["X@GRAD"]}
    d2 = _call(_kernel("softmax_grad", device, p.dtype), ins, attrs[s])
    out = {
        f"{m}.X@GRAD": shape_stand_in(d0["X@GRAD"]),
        f"{c}.X@GRAD": shape_stand_in(d1["X@GRAD"]),
        f"{s}.X@GRAD": d2["X@GRAD"],
    }
    if lead:
        out["0.Out"] = shape_stand_in(d)
    if bias:
        k = str(lead + 3)
        ins = {"X": inputs[f"{k}.X"], "Y": inputs[f"{k}.Y"], "Out@GRAD": d2["X@GRAD"]}
        wanted = frozenset({"X@GRAD", "Y@GRAD"})
        res = _call(_kernel("elementwise_add_grad", device, p.dtype), ins, attrs[k], wanted)
        out[f"{s}.X@GRAD"] = shape_stand_in(d2["X@GRAD"])
        out.update({f"{k}.{slot}": v for slot, v in res.items()})
    return out


def _declines(ops, lead: int, bias: bool) -> bool:
    if lead:
        fill = ops[0]
        if any(fill.inputs.get(s) for s in fill.inputs) or list(fill.attrs.get("shape", ())) != [1]:
            return True
        try:
            np.dtype(fill.attrs["dtype"])
        except (TypeError, KeyError):
            return True
    ce, sm = ops[lead + 1], ops[lead + 2]
    if ce.attrs.get("soft_label") or sm.attrs.get("axis", -1) not in (-1, 1):
        return True
    if ce.input("X") != sm.input("Out"):
        return True  # the cross-entropy of another tensor than this softmax's output
    if bias:
        add = ops[lead + 3]
        if add.attrs.get("axis", -1) not in (-1, 1):
            return True
        if any(not add.outputs.get(s) for s in ("X@GRAD", "Y@GRAD")):
            return True
    return False


def make_loss_grad(device: str, lead: int = 0, bias: bool = False):
    """[``fill_constant`` +] ``mean_grad`` + ``cross_entropy_grad`` + ``softmax_grad`` [+
    ``elementwise_add_grad``] of ``mean(cross_entropy(softmax(x + b)))`` (hard labels,
    softmax over the last axis of a 2-D input): one pass writing dz [and db]."""
    m, c, s, k = (str(lead + i) for i in range(4))

    def make(ops, block):
        if _declines(ops, lead, bias) or load_numba() is None:
            return None
        from oar_kernels_numba._fused_loops import mean_ce_softmax_grad_rows

        def loss_grad(inputs, attrs):
            p, lab, y = inputs[f"{c}.X"], inputs[f"{c}.Label"], inputs[f"{m}.X"]
            d = _upstream(inputs, attrs, lead)
            if (
                type(p) is not np.ndarray
                or p.ndim != 2
                or p.dtype not in FLOAT_DTYPES
                or not p.flags.c_contiguous
                or type(lab) is not np.ndarray
                or lab.dtype.kind not in "iu"
                or lab.size != p.shape[0]
                or y.shape != (p.shape[0], 1)
                or y.dtype != p.dtype
                or getattr(d, "size", 0) != 1
                or (bias and not _bias_ok(inputs[f"{k}.X"], inputs[f"{k}.Y"], p))
            ):
                return _unfused_loss_grad(inputs, attrs, device, lead, bias)
            # mean_grad's value: the upstream scalar over the element count, in p's dtype
            dy = p.dtype.type(d.reshape(-1)[0] / max(y.size, 1))
            tiny = np.finfo(p.dtype).tiny
            dx = np.empty_like(p)
            db = np.empty(p.shape[1], p.dtype) if bias else _NO_BIAS[p.dtype]
            lab1 = lab.reshape(-1).astype(np.int64, copy=False)
            ignore = attrs[c]["ignore_index"]
            if not mean_ce_softmax_grad_rows(p, lab1, ignore, dy, tiny, dx, db):
                return _unfused_loss_grad(inputs, attrs, device, lead, bias)  # the numpy error
            out = {f"{m}.X@GRAD": shape_stand_in(y), f"{c}.X@GRAD": shape_stand_in(p)}
            if lead:
                out["0.Out"] = shape_stand_in(d)
            if bias:
                out.update(
                    {f"{s}.X@GRAD": shape_stand_in(dx), f"{k}.X@GRAD": dx, f"{k}.Y@GRAD": db}
                )
            else:
                out[f"{s}.X@GRAD"] = dx
            return out

        return loss_grad

    return make


def _bias_ok(x, b, p) -> bool:
    return getattr(x, "shape", None) == p.shape and (
        type(b) is np.ndarray and b.shape == (p.shape[1],) and b.dtype == p.dtype
    )


def register(registry, device: str, priority: int) -> None:
    """The loss fusions, longest chains first (the plan tries them in this order)."""
    grads = ("mean_grad", "cross_entropy_grad", "softmax_grad")
    registry.register_fusion(
        "softmax_cross_entropy_mean",
        ("elementwise_add", "softmax", "cross_entropy", "mean"),
        device,
        make_softmax_loss(device),
        priority,
        keeps_intermediates=True,
    )
    for name, ops, lead, bias in (
        ("seeded_loss_bias_grad", ("fill_constant", *grads, "elementwise_add_grad"), 1, True),
        ("mean_cross_entropy_softmax_bias_grad", (*grads, "elementwise_add_grad"), 0, True),
        ("mean_cross_entropy_softmax_grad", grads, 0, False),
    ):
        make = make_loss_grad(device, lead, bias)
        registry.register_fusion(name, ops, device, make, priority)
