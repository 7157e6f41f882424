"""Unary activations (X -> Out, same shape), with and without attributes.

Plain ones (relu, tanh, ...) have no attrs; parametric ones (leaky_relu's
alpha, hard_swish's threshold/scale/offset ...) carry Fluid's attr names and
defaults. ``prelu`` (with a learnable Alpha) and ``maxout`` live in their own
module because their shapes differ.
"""

from __future__ import annotations

from oar.ops._infer import check_float, same_as
from oar.registry import Attr, GradSpec, OpDef

# grad reads Out: d/dx is cheapest from the output
FROM_OUT = ("relu", "sigmoid", "tanh", "exp", "sqrt", "rsqrt", "reciprocal")
# grad reads X
FROM_X = (
    "square",
    "abs",
    "log",
    "sin",
    "cos",
    "softsign",
    "softplus",
    "logsigmoid",
    "tanh_shrink",
    "erf",
    "acos",
    "asin",
    "atan",
    "log1p",
)
# piecewise-constant: the gradient is zero (Fluid defines it so)
ZERO_GRAD = ("floor", "ceil", "round")

# parametric activations: name -> attrs (Fluid's names and defaults); grads read X
PARAMETRIC = {
    "leaky_relu": {"alpha": Attr(float, 0.02)},
    "elu": {"alpha": Attr(float, 1.0)},
    "relu6": {"threshold": Attr(float, 6.0)},
    "brelu": {"t_min": Attr(float, 0.0), "t_max": Attr(float, 24.0)},
    "soft_relu": {"threshold": Attr(float, 40.0)},
    "swish": {"beta": Attr(float, 1.0)},
    "gelu": {"approximate": Attr(bool, False)},
    "hard_sigmoid": {"slope": Attr(float, 0.2), "offset": Attr(float, 0.5)},
    "hard_swish": {
        "threshold": Attr(float, 6.0),
        "scale": Attr(float, 6.0),
        "offset": Attr(float, 3.0),
    },
    "selu": {"scale": Attr(float, 1.0507009873554805), "alpha": Attr(float, 1.6732632423543772)},
    "stanh": {"scale_a": Attr(float, 2.0 / 3.0), "scale_b": Attr(float, 1.7159)},
    "thresholded_relu": {"threshold": Attr(float, 1.0)},
    "softshrink": {"lambda": Attr(float, 0.5)},
    "hard_shrink": {"threshold": Attr(float, 0.5)},
    "pow": {"factor": Attr(float, 1.0)},
    "mish": {"threshold": Attr(float, 20.0)},
}


def _infer_float(ins, attrs):
    check_float(ins, "X")
    return {"Out": ins["X"]}


def _infer_log_softmax(ins, attrs):
    check_float(ins, "X")
    rank = len(ins["X"].shape)
    if not -rank <= attrs["axis"] < rank:
        raise ValueError(f"axis {attrs['axis']} is out of range for X of rank {rank}")
    return {"Out": ins["X"]}


def register(registry) -> None:
    lod = (("X", "Out"),)
    registry.register_op(OpDef("sign", ["X"], ["Out"], {}, infer_shape=same_as()))
    for name in FROM_OUT:
        registry.register_op(
            OpDef(
                name,
                ["X"],
                ["Out"],
                {},
                infer_shape=_infer_float,
                grad=GradSpec(("Out", "Out@GRAD"), ("X@GRAD",)),
                share_lod=lod,
            )
        )
    for name in (*FROM_X, *ZERO_GRAD):  # the grad kernel reads X (zero-grad ops: its shape)
        registry.register_op(
            OpDef(
                name,
                ["X"],
                ["Out"],
                {},
                infer_shape=same_as() if name == "abs" else _infer_float,
                grad=GradSpec(("X", "Out@GRAD"), ("X@GRAD",)),
                share_lod=lod,
            )
        )
    for name, attrs in PARAMETRIC.items():
        inputs = ["X", "FactorTensor?"] if name == "pow" else ["X"]
        reads = ("X", "FactorTensor", "Out@GRAD") if name == "pow" else ("X", "Out", "Out@GRAD")
        registry.register_op(
            OpDef(
                name,
                inputs,
                ["Out"],
                dict(attrs),
                infer_shape=_infer_float,
                grad=GradSpec(reads, ("X@GRAD",)),
                share_lod=lod,
            )
        )
    registry.register_op(
        OpDef(
            "log_softmax",
            ["X"],
            ["Out"],
            {"axis": Attr(int, -1)},
            infer_shape=_infer_log_softmax,
            grad=GradSpec(("Out", "Out@GRAD"), ("X@GRAD",)),
            share_lod=lod,
        )
    )
