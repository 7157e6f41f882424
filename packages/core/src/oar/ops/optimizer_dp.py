"""``dpsgd``: differentially private SGD (Abadi et al.): the gradient is clipped to L2 norm
``clip``, Gaussian noise of std ``sigma`` scaled by ``1 / batch_size`` is added, then an
SGD step. Param, Grad, LearningRate -> ParamOut (in place)."""

from __future__ import annotations

from oar.registry import Attr, OpDef


def _positive(v):
    return None if v > 0 else "must be positive"


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "dpsgd",
            ["Param", "Grad", "LearningRate"],
            ["ParamOut"],
            {
                "clip": Attr(float, 10.0, _positive),
                "batch_size": Attr(float, 16.0, _positive),
                "sigma": Attr(float, 1.0),
                "seed": Attr(int, 0),
            },
            kernel_dtype="Param",
        )
    )
