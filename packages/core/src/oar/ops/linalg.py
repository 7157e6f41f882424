"""Linear-algebra ops of Fluid 1.8's tensor API: bmm, dot, cross, dist, kron, trace, addmm,
diag_embed."""

from __future__ import annotations

from oar.ops._infer import check_same_dtype, compatible, meta
from oar.registry import Attr, GradSpec, OpDef

# cross's "dim" when the user gave none: the first axis of size 3 (Fluid's default)
CROSS_DEFAULT_DIM = -100


def _infer_bmm(ins, attrs):
    x, y = ins["X"].shape, ins["Y"].shape
    dtype = check_same_dtype(ins, "X", "Y")
    if len(x) != 3 or len(y) != 3:
        raise ValueError(f"X and Y must be 3-D [batch, M, K] and [batch, K, N], given {x} and {y}")
    if not compatible(x[0], y[0]) or not compatible(x[2], y[1]):
        raise ValueError(f"X {list(x)} and Y {list(y)}: batch sizes and K must match")
    return {"Out": meta((x[0], x[1], y[2]), dtype)}


def _infer_dot(ins, attrs):
    x, y = ins["X"].shape, ins["Y"].shape
    dtype = check_same_dtype(ins, "X", "Y")
    if len(x) not in (1, 2) or len(x) != len(y) or not all(map(compatible, x, y)):
        raise ValueError(f"X and Y must be 1-D or 2-D of the same shape, given {x} and {y}")
    return {"Out": meta((x[0], 1) if len(x) == 2 else (1,), dtype)}


def cross_axis(shape, dim: int) -> int:
    """The axis cross works on: ``dim``, or the first axis of size 3."""
    if dim == CROSS_DEFAULT_DIM:
        for i, d in enumerate(shape):
            if d == 3:
                return i
        raise ValueError(f"no dimension of size 3 in X {list(shape)} to take the cross product on")
    if not -len(shape) <= dim < len(shape):
        raise ValueError(f"dim {dim} is out of range for rank {len(shape)}")
    return dim % len(shape)


def _infer_cross(ins, attrs):
    x, y = ins["X"].shape, ins["Y"].shape
    dtype = check_same_dtype(ins, "X", "Y")
    if len(x) != len(y) or not all(map(compatible, x, y)):
        raise ValueError(f"X and Y must have the same shape, given {list(x)} and {list(y)}")
    axis = cross_axis(x, attrs["dim"])
    if x[axis] not in (3, -1):
        raise ValueError(f"dimension {axis} of X {list(x)} must be 3")
    return {"Out": meta(x, dtype)}


def _infer_dist(ins, attrs):
    check_same_dtype(ins, "X", "Y")
    x, y = list(ins["X"].shape), list(ins["Y"].shape)
    for a, b in zip(reversed(x), reversed(y)):
        if not (a == b or a == 1 or b == 1 or a < 0 or b < 0):
            raise ValueError(f"X {x} and Y {y} do not broadcast")
    return {"Out": meta((1,), ins["X"].dtype)}


def _infer_kron(ins, attrs):
    x, y = list(ins["X"].shape), list(ins["Y"].shape)
    dtype = check_same_dtype(ins, "X", "Y")
    n = max(len(x), len(y))
    x, y = [1] * (n - len(x)) + x, [1] * (n - len(y)) + y
    return {"Out": meta([a * b if a >= 0 and b >= 0 else -1 for a, b in zip(x, y)], dtype)}


def trace_axes(rank: int, dim1: int, dim2: int) -> tuple:
    if not (-rank <= dim1 < rank and -rank <= dim2 < rank):
        raise ValueError(
            f"dim1 {dim1} and dim2 {dim2} must be in [{-rank}, {rank}) for rank {rank}"
        )
    d1, d2 = dim1 % rank, dim2 % rank
    if d1 == d2:
        raise ValueError(f"dim1 and dim2 must be different axes, given {dim1} and {dim2}")
    return d1, d2


def _infer_trace(ins, attrs):
    x = ins["Input"].shape
    if len(x) < 2:
        raise ValueError(f"Input must have at least 2 dims, given {list(x)}")
    d1, d2 = trace_axes(len(x), attrs["dim1"], attrs["dim2"])
    out = [d for i, d in enumerate(x) if i not in (d1, d2)] or [1]
    return {"Out": meta(out, ins["Input"].dtype)}


def _infer_addmm(ins, attrs):
    x, y, inp = ins["X"].shape, ins["Y"].shape, ins["Input"].shape
    dtype = check_same_dtype(ins, "Input", "X", "Y")
    if len(x) != 2 or len(y) != 2 or not compatible(x[1], y[0]):
        raise ValueError(
            f"X and Y must be [M, K] and [K, N] matrices, given {list(x)} and {list(y)}"
        )
    out = (x[0], y[1])
    if len(inp) > 2 or any(
        not (a == b or a == 1 or a < 0 or b < 0) for a, b in zip(inp[::-1], out[::-1])
    ):
        raise ValueError(f"Input {list(inp)} does not broadcast to the product's shape {list(out)}")
    return {"Out": meta(out, dtype)}


def diag_embed_axes(rank_out: int, dim1: int, dim2: int) -> tuple:
    return trace_axes(rank_out, dim1, dim2)


def _infer_diag_embed(ins, attrs):
    x = list(ins["Input"].shape)
    rank = len(x) + 1
    d1, d2 = diag_embed_axes(rank, attrs["dim1"], attrs["dim2"])
    m = x[-1] + abs(attrs["offset"]) if x[-1] >= 0 else -1
    out, batch = [0] * rank, iter(x[:-1])
    for i in range(rank):
        out[i] = m if i in (d1, d2) else next(batch)
    return {"Out": meta(out, ins["Input"].dtype)}


def _op(registry, name, ins, attrs, infer, grads, reads=()):
    registry.register_op(
        OpDef(
            name,
            ins,
            ["Out"],
            attrs,
            infer_shape=infer,
            grad=GradSpec((*ins, *reads, "Out@GRAD"), tuple(f"{s}@GRAD" for s in grads)),
        )
    )


def register(registry) -> None:
    _op(registry, "bmm", ["X", "Y"], {}, _infer_bmm, ("X", "Y"))
    _op(registry, "dot", ["X", "Y"], {}, _infer_dot, ("X", "Y"))
    _op(
        registry,
        "cross",
        ["X", "Y"],
        {"dim": Attr(int, CROSS_DEFAULT_DIM)},
        _infer_cross,
        ("X", "Y"),
    )
    _op(registry, "dist", ["X", "Y"], {"p": Attr(float, 2.0)}, _infer_dist, ("X", "Y"), ("Out",))
    _op(registry, "kron", ["X", "Y"], {}, _infer_kron, ("X", "Y"))
    _op(
        registry,
        "trace",
        ["Input"],
        {"offset": Attr(int, 0), "dim1": Attr(int, 0), "dim2": Attr(int, 1)},
        _infer_trace,
        ("Input",),
    )
    _op(
        registry,
        "addmm",
        ["Input", "X", "Y"],
        {"Alpha": Attr(float, 1.0), "Beta": Attr(float, 1.0)},
        _infer_addmm,
        ("Input", "X", "Y"),
    )
    _op(
        registry,
        "diag_embed",
        ["Input"],
        {"offset": Attr(int, 0), "dim1": Attr(int, -2), "dim2": Attr(int, -1)},
        _infer_diag_embed,
        ("Input",),
    )
