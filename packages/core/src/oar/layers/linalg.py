"""Linear-algebra layers of Fluid 1.8's tensor API: bmm, dot, cross, dist, kron, trace,
addmm, diag_embed, t."""

from __future__ import annotations

from typing import Any

from oar.errors import ArgumentError, ArgumentTypeError
from oar.layer_helper import LayerHelper, check_variable

__all__ = ["bmm", "dot", "cross", "dist", "kron", "trace", "addmm", "diag_embed", "t"]

_CROSS_DEFAULT_DIM = -100  # oar.ops.linalg.CROSS_DEFAULT_DIM


def _append(
    op_type: str, ins: dict, attrs: dict | None = None, name: str | None = None, out: Any = None
) -> Any:
    helper = LayerHelper(op_type, name=name)
    for arg, v in ins.values():
        check_variable(op_type, arg, v)
    first = next(iter(ins.values()))[1]
    if out is None:
        out = helper.create_variable_for_type_inference(first.dtype)
    helper.append_op(op_type, {s: [v] for s, (_, v) in ins.items()}, {"Out": [out]}, attrs or {})
    return out


def _int(layer: str, arg: str, v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise ArgumentTypeError(layer, f"{arg} must be an int, given {v!r}")
    return v


def bmm(x, y, name=None):
    """Batched matrix product of [B, M, K] and [B, K, N]."""
    return _append("bmm", {"X": ("x", x), "Y": ("y", y)}, name=name)


def dot(x, y, name=None):
    """Inner product of 1-D vectors ([1]) or of the rows of 2-D [N, D] tensors ([N, 1])."""
    return _append("dot", {"X": ("x", x), "Y": ("y", y)}, name=name)


def cross(input, other, dim=None):
    """Cross product along ``dim`` (default: the first axis of size 3)."""
    d = _CROSS_DEFAULT_DIM if dim is None else _int("cross", "dim", dim)
    return _append("cross", {"X": ("input", input), "Y": ("other", other)}, {"dim": d})


def dist(x, y, p=2):
    """The p-norm of ``x - y`` (broadcast); p may be 0, inf or -inf. Shape [1]."""
    if not isinstance(p, (int, float)) or isinstance(p, bool):
        raise ArgumentTypeError("dist", f"p must be a number, given {p!r}")
    return _append("dist", {"X": ("x", x), "Y": ("y", y)}, {"p": float(p)})


def kron(x, y, out=None, name=None):
    """Kronecker product (the lower-rank input gets leading 1s)."""
    return _append("kron", {"X": ("x", x), "Y": ("y", y)}, name=name, out=out)


def trace(input, offset=0, dim1=0, dim2=1, out=None, name=None):
    """Sum of the ``offset`` diagonal of the ``(dim1, dim2)`` planes."""
    attrs = {
        "offset": _int("trace", "offset", offset),
        "dim1": _int("trace", "dim1", dim1),
        "dim2": _int("trace", "dim2", dim2),
    }
    return _append("trace", {"Input": ("input", input)}, attrs, name=name, out=out)


def addmm(input, x, y, alpha=1.0, beta=1.0, name=None):
    """``beta * input + alpha * (x @ y)``."""
    return _append(
        "addmm",
        {"Input": ("input", input), "X": ("x", x), "Y": ("y", y)},
        {"Alpha": float(alpha), "Beta": float(beta)},
        name=name,
    )


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """Place the last axis of ``input`` on the ``offset`` diagonal of new ``(dim1, dim2)`` planes."""
    attrs = {
        "offset": _int("diag_embed", "offset", offset),
        "dim1": _int("diag_embed", "dim1", dim1),
        "dim2": _int("diag_embed", "dim2", dim2),
    }
    return _append("diag_embed", {"Input": ("input", input)}, attrs)


def t(input, name=None):
    """Transpose of a tensor of at most 2 dims (a 0-D or 1-D tensor comes back as it is)."""
    from oar.layers.manip import transpose

    check_variable("t", "input", input)
    rank = len(input.shape)
    if rank > 2:
        raise ArgumentError("t", f"input must have at most 2 dims, given shape {list(input.shape)}")
    if rank < 2:
        return input
    return transpose(input, [1, 0], name=name)
