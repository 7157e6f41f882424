"""``dropout``: X (Seed?) -> Out, Mask.

``downgrade_in_infer``: train ``x * mask``, infer ``x * (1 - p)``;
``upscale_in_train``: train ``x * mask / (1 - p)``, infer ``x``. ``Mask`` is a
uint8 tensor of kept positions. ``fix_seed`` with ``seed`` repeats the mask on
every run, as in Fluid.
"""

from __future__ import annotations

from oar.ops._infer import check_float, meta, one_of
from oar.registry import Attr, GradSpec, OpDef


def _prob(v):
    return None if 0.0 <= v <= 1.0 else "must be in [0, 1]"


def _infer(ins, attrs):
    x = ins["X"]
    check_float(ins, "X")
    return {"Out": x, "Mask": meta(x.shape, "uint8", x.lod_level)}


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "dropout",
            ["X", "Seed?"],
            ["Out", "Mask"],
            {
                "dropout_prob": Attr(float, 0.5, _prob),
                "is_test": Attr(bool, False),
                "seed": Attr(int, 0),
                "fix_seed": Attr(bool, False),
                "dropout_implementation": Attr(
                    str, "downgrade_in_infer", one_of("downgrade_in_infer", "upscale_in_train")
                ),
            },
            infer_shape=_infer,
            kernel_dtype="X",
            share_lod=(("X", "Out"),),
            grad=GradSpec(("Mask", "Out@GRAD"), ("X@GRAD",)),
            doc="randomly zeroes elements in training",
        )
    )
