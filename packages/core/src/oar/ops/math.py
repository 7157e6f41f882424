"""Arithmetic helpers: scale, sum (of a list), mean."""

from __future__ import annotations

from oar.ops._infer import meta
from oar.registry import Attr, GradOpDesc, GradSpec, OpDef


def _infer_sum(ins, attrs):
    xs = ins["X"]
    first = xs[0]
    for i, x in enumerate(xs[1:], 1):
        if x.dtype != first.dtype:
            raise TypeError(f"X[{i}] has dtype {x.dtype}, X[0] has {first.dtype}")
        if len(x.shape) != len(first.shape) or any(
            a != b and a >= 0 and b >= 0 for a, b in zip(x.shape, first.shape)
        ):
            raise ValueError(f"X[{i}] has shape {list(x.shape)}, X[0] has {list(first.shape)}")
    return {"Out": first}


def _grad_sum(g):
    out = []
    for name in g.input_grad("X"):
        if name != "@EMPTY@":
            out.append(
                GradOpDesc(
                    "scale",
                    {"X": g.output_grad("Out")},
                    {"Out": [name]},
                    {"scale": 1.0, "bias": 0.0, "bias_after_scale": True},
                )
            )
    return out


def _grad_scale(g):
    # d(x * s + b)/dx = s, where s comes from ScaleTensor when one is given (as in Fluid)
    ins = {"X": g.output_grad("Out")}
    if g.input("ScaleTensor"):
        ins["ScaleTensor"] = g.input("ScaleTensor")
    return [
        GradOpDesc(
            "scale",
            ins,
            {"Out": g.input_grad("X")},
            {"scale": g.attrs["scale"], "bias": 0.0, "bias_after_scale": True},
        )
    ]


def _infer_mean(ins, attrs):
    return {"Out": meta([1], ins["X"].dtype)}


def _grad_assign(g):
    return [GradOpDesc("assign", {"X": g.output_grad("Out")}, {"Out": g.input_grad("X")}, {})]


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "assign",
            ["X"],
            ["Out"],
            {},
            infer_shape=lambda ins, a: {"Out": ins["X"]},
            grad=_grad_assign,
            share_lod=(("X", "Out"),),
        )
    )
    registry.register_op(
        OpDef(
            "scale",
            ["X", "ScaleTensor?"],
            ["Out"],
            {
                "scale": Attr(float, 1.0),
                "bias": Attr(float, 0.0),
                "bias_after_scale": Attr(bool, True),
            },
            infer_shape=lambda ins, a: {"Out": ins["X"]},
            grad=_grad_scale,
            share_lod=(("X", "Out"),),
        )
    )
    registry.register_op(OpDef("sum", ["X*"], ["Out"], {}, infer_shape=_infer_sum, grad=_grad_sum))
    registry.register_op(
        OpDef(
            "mean",
            ["X"],
            ["Out"],
            {},
            infer_shape=_infer_mean,
            grad=GradSpec(("X", "Out@GRAD"), ("X@GRAD",)),
        )
    )
