"""``lrn``: local response normalisation across channels (AlexNet).

``MidOut = k + alpha * sum(x^2 over n neighbouring channels)``, ``Out = x * MidOut^-beta``;
``n`` is odd and the window of channel c is ``[c - (n-1)/2, c + (n-1)/2]`` and, as in
Fluid, ``alpha`` is not divided by ``n``.
"""

from __future__ import annotations

from oar.ops._infer import check_float, one_of
from oar.registry import Attr, GradSpec, OpDef


def _odd(n):
    return None if n > 0 and n % 2 == 1 else "must be a positive odd number (as in Fluid)"


def _infer(ins, attrs):
    x = ins["X"]
    check_float(ins, "X")
    if len(x.shape) != 4:
        raise ValueError(f"lrn: X must be 4-D, given shape {list(x.shape)}")
    return {"Out": x, "MidOut": x}


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "lrn",
            ["X"],
            ["Out", "MidOut"],
            {
                "n": Attr(int, 5, _odd),
                "k": Attr(float, 1.0),
                "alpha": Attr(float, 1e-4),
                "beta": Attr(float, 0.75),
                "is_test": Attr(bool, False),
                "data_format": Attr(str, "NCHW", one_of("NCHW", "NHWC", "AnyLayout")),
            },
            infer_shape=_infer,
            grad=GradSpec(("X", "Out", "MidOut", "Out@GRAD"), ("X@GRAD",)),
            doc="local response normalisation across channels",
        )
    )
