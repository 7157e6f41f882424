"""``data_norm``: normalisation by running summaries (CTR models).

``mean = BatchSum / BatchSize``, ``scale = sqrt(BatchSize / BatchSquareSum)``,
``Y = (X - mean) * scale`` per column of X [N, C]. As in Fluid, the "gradients" of the
summaries are this batch's statistics: N, sum(x) and sum((x - mean)^2) + N * epsilon.
"""

from __future__ import annotations

from oar.ops._infer import check_float, meta
from oar.registry import Attr, GradSpec, OpDef


def _infer(ins, attrs):
    x = ins["X"]
    check_float(ins, "X")
    if len(x.shape) != 2:
        raise ValueError(f"data_norm: X must be [N, C], given {list(x.shape)}")
    c = x.shape[1]
    for slot in ("BatchSize", "BatchSum", "BatchSquareSum"):
        if c >= 0 and list(ins[slot].shape) != [c]:
            raise ValueError(f"data_norm: {slot} must be [{c}], given {list(ins[slot].shape)}")
    stat = meta([c], x.dtype)
    return {"Y": x, "Means": stat, "Scales": stat}


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "data_norm",
            ["X", "BatchSize", "BatchSum", "BatchSquareSum", "scale_w?", "bias?"],
            ["Y", "Means", "Scales"],
            {
                "epsilon": Attr(float, 1e-4),
                "slot_dim": Attr(int, -1),
                "data_layout": Attr(str, "NCHW"),
                "summary_decay_rate": Attr(float, 0.9999999),
                "sync_stats": Attr(bool, False),
                "enable_scale_and_shift": Attr(bool, False),
            },
            infer_shape=_infer,
            kernel_dtype="X",
            grad=GradSpec(
                ("X", "Means", "Scales", "scale_w", "Y@GRAD"),
                (
                    "X@GRAD",
                    "BatchSize@GRAD",
                    "BatchSum@GRAD",
                    "BatchSquareSum@GRAD",
                    "scale_w@GRAD",
                    "bias@GRAD",
                ),
            ),
        )
    )
