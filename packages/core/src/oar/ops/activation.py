"""Unary activations: relu, sigmoid, tanh, square, ... (X -> Out, same shape)."""

from __future__ import annotations

from oar.ops._infer import check_float, same_as
from oar.registry import GradSpec, OpDef

# grad reads Out: d/dx is cheapest from the output
FROM_OUT = ("relu", "sigmoid", "tanh", "exp", "sqrt", "rsqrt", "reciprocal")
# grad reads X
FROM_X = ("square", "abs", "log", "sin", "cos", "softsign", "softplus")


def _infer_float(ins, attrs):
    check_float(ins, "X")
    return {"Out": ins["X"]}


def register(registry) -> None:
    registry.register_op(OpDef("sign", ["X"], ["Out"], {}, infer_shape=same_as()))
    for name in FROM_OUT:
        registry.register_op(OpDef(name, ["X"], ["Out"], {}, infer_shape=_infer_float,
                                   grad=GradSpec(("Out", "Out@GRAD"), ("X@GRAD",)),
                                   share_lod=(("X", "Out"),)))
    for name in FROM_X:
        registry.register_op(OpDef(name, ["X"], ["Out"], {},
                                   infer_shape=same_as() if name == "abs" else _infer_float,
                                   grad=GradSpec(("X", "Out@GRAD"), ("X@GRAD",)),
                                   share_lod=(("X", "Out"),)))
