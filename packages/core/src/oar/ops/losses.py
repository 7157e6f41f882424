"""Loss ops: cross_entropy (on probabilities), softmax_with_cross_entropy,
sigmoid_cross_entropy_with_logits, log_loss, huber_loss, smooth_l1_loss, bpr_loss, kldiv_loss.
"""

from __future__ import annotations

from oar.ops._infer import check_float, check_same_dtype, compatible, meta, one_of
from oar.registry import Attr, GradSpec, OpDef

# --- loss ---


def _infer_cross_entropy(ins, attrs):
    x, label = ins["X"], ins["Label"]
    check_float(ins, "X")
    if len(x.shape) != len(label.shape):
        raise ValueError(
            f"Label must have the rank of X ({len(x.shape)}); given Label shape {list(label.shape)} "
            f"for X shape {list(x.shape)}"
        )
    for a, b in zip(x.shape[:-1], label.shape[:-1]):
        if not compatible(a, b):
            raise ValueError(
                f"X {list(x.shape)} and Label {list(label.shape)} differ in the leading dims"
            )
    if attrs["soft_label"]:
        if label.dtype != x.dtype:
            raise TypeError(f"soft Label must have X's dtype {x.dtype}, given {label.dtype}")
        if not compatible(label.shape[-1], x.shape[-1]):
            raise ValueError(
                f"soft Label's last dim {label.shape[-1]} must equal X's {x.shape[-1]}"
            )
    else:
        # a float hard Label builds (as in Fluid, and the seed's 单机训练 sample builds one);
        # the kernel refuses it when the program runs
        if label.shape[-1] != 1 and label.shape[-1] >= 0:
            raise ValueError(f"hard Label's last dim must be 1, given shape {list(label.shape)}")
    return {"Y": meta(tuple(x.shape[:-1]) + (1,), x.dtype, x.lod_level)}


def _register_loss(registry) -> None:
    registry.register_op(
        OpDef(
            "cross_entropy",
            ["X", "Label"],
            ["Y"],
            {"soft_label": Attr(bool, False), "ignore_index": Attr(int, -100)},
            infer_shape=_infer_cross_entropy,
            grad=GradSpec(("X", "Label", "Y@GRAD"), ("X@GRAD",)),
            share_lod=(("X", "Y"),),
        )
    )


# --- losses ---


_INT = ("int64", "int32")


def _same_shape(ins, a: str, b: str) -> None:
    x, y = ins[a], ins[b]
    if len(x.shape) != len(y.shape) or not all(compatible(p, q) for p, q in zip(x.shape, y.shape)):
        raise ValueError(
            f"{a} and {b} must have the same shape, given {list(x.shape)} and {list(y.shape)}"
        )


def _infer_swce(ins, attrs):
    logits, label = ins["Logits"], ins["Label"]
    check_float(ins, "Logits")
    rank = len(logits.shape)
    axis = attrs["axis"]
    if not -rank <= axis < rank:
        raise ValueError(f"axis {axis} is out of range for Logits of rank {rank}")
    axis %= rank
    if len(label.shape) != rank:
        raise ValueError(
            f"Label must have Logits' rank {rank}, given Label shape {list(label.shape)} for Logits "
            f"shape {list(logits.shape)}"
        )
    for i, (a, b) in enumerate(zip(logits.shape, label.shape)):
        if i != axis and not compatible(a, b):
            raise ValueError(
                f"Label shape {list(label.shape)} and Logits shape {list(logits.shape)} differ at dim {i}"
            )
    if attrs["soft_label"]:
        if label.dtype != logits.dtype:
            raise TypeError(
                f"soft Label must have Logits' dtype {logits.dtype}, given {label.dtype}"
            )
        if not compatible(label.shape[axis], logits.shape[axis]):
            raise ValueError(
                f"soft Label's dim {axis} ({label.shape[axis]}) must equal Logits' ({logits.shape[axis]})"
            )
    else:
        if label.dtype not in _INT:
            raise TypeError(f"hard Label must hold int64 class ids, given {label.dtype}")
        if label.shape[axis] != 1 and label.shape[axis] >= 0:
            raise ValueError(f"hard Label's dim {axis} must be 1, given shape {list(label.shape)}")
    loss = list(logits.shape)
    loss[axis] = 1
    return {"Softmax": logits, "Loss": meta(loss, logits.dtype, logits.lod_level)}


def _infer_sce(ins, attrs):
    check_float(ins, "X")
    check_same_dtype(ins, "X", "Label")
    _same_shape(ins, "X", "Label")
    return {"Out": ins["X"]}


def _infer_log_loss(ins, attrs):
    check_float(ins, "Predicted")
    check_same_dtype(ins, "Predicted", "Labels")
    _same_shape(ins, "Predicted", "Labels")
    p = ins["Predicted"]
    if len(p.shape) != 2 or (p.shape[1] != 1 and p.shape[1] >= 0):
        raise ValueError(f"Predicted must have shape [N, 1], given {list(p.shape)}")
    return {"Loss": p}


def _infer_huber(ins, attrs):
    check_float(ins, "X")
    check_same_dtype(ins, "X", "Y")
    _same_shape(ins, "X", "Y")
    x = ins["X"]  # elementwise, any shape (as Fluid 1.8.5)
    return {"Out": x, "Residual": x}


def _infer_smooth_l1(ins, attrs):
    check_float(ins, "X")
    check_same_dtype(ins, "X", "Y")
    _same_shape(ins, "X", "Y")
    for w in ("InsideWeight", "OutsideWeight"):
        if ins.get(w) is not None:
            _same_shape(ins, "X", w)
    x = ins["X"]
    if len(x.shape) < 2:
        raise ValueError(f"X must have rank >= 2 (a batch of samples), given shape {list(x.shape)}")
    return {"Diff": x, "Out": meta([x.shape[0], 1], x.dtype, x.lod_level)}


def _infer_bpr(ins, attrs):
    x, label = ins["X"], ins["Label"]
    check_float(ins, "X")
    if label.dtype not in _INT:
        raise TypeError(f"Label must hold int64 item ids, given {label.dtype}")
    if len(x.shape) != len(label.shape) or not all(
        compatible(a, b) for a, b in zip(x.shape[:-1], label.shape[:-1])
    ):
        raise ValueError(
            f"Label shape {list(label.shape)} does not fit X shape {list(x.shape)} (want [..., 1])"
        )
    if label.shape[-1] != 1 and label.shape[-1] >= 0:
        raise ValueError(f"Label's last dim must be 1, given shape {list(label.shape)}")
    if 0 <= x.shape[-1] < 2:
        raise ValueError(f"X needs at least 2 items in its last dim, given shape {list(x.shape)}")
    return {"Y": meta(tuple(x.shape[:-1]) + (1,), x.dtype, x.lod_level)}


def _infer_kldiv(ins, attrs):
    check_float(ins, "X")
    check_same_dtype(ins, "X", "Target")
    _same_shape(ins, "X", "Target")
    x = ins["X"]
    return {"Loss": x if attrs["reduction"] == "none" else meta([1], x.dtype)}


def _infer_tss(ins, attrs):
    check_float(ins, "X")
    check_same_dtype(ins, "X", "Label")
    _same_shape(ins, "X", "Label")
    x = ins["X"]
    if len(x.shape) != 2 or (x.shape[1] != 1 and x.shape[1] >= 0):
        raise ValueError(f"X must have shape [N, 1], given {list(x.shape)}")
    return {"Y": x}


def _infer_focal(ins, attrs):
    x, label, fg = ins["X"], ins["Label"], ins["FgNum"]
    check_float(ins, "X")
    if label.dtype not in _INT or fg.dtype not in _INT:
        raise TypeError(f"Label and FgNum must be int32, given {label.dtype} and {fg.dtype}")
    if len(x.shape) != 2 or len(label.shape) != 2 or (label.shape[1] != 1 and label.shape[1] >= 0):
        raise ValueError(
            f"X must be [N, C] and Label [N, 1], given {list(x.shape)} and {list(label.shape)}"
        )
    if not compatible(x.shape[0], label.shape[0]):
        raise ValueError(f"X has {x.shape[0]} rows but Label has {label.shape[0]}")
    if attrs["gamma"] < 0 or not 0 <= attrs["alpha"] <= 1:
        raise ValueError(
            f"gamma must be >= 0 and alpha in [0, 1], given {attrs['gamma']} and {attrs['alpha']}"
        )
    return {"Out": x}


def _register_losses(registry) -> None:
    registry.register_op(
        OpDef(
            "softmax_with_cross_entropy",
            ["Logits", "Label"],
            ["Softmax", "Loss"],
            {
                "soft_label": Attr(bool, False),
                "ignore_index": Attr(int, -100),
                "numeric_stable_mode": Attr(bool, True),
                "axis": Attr(int, -1),
            },
            infer_shape=_infer_swce,
            kernel_dtype="Logits",
            grad=GradSpec(("Softmax", "Label", "Loss@GRAD"), ("Logits@GRAD",)),
            share_lod=(("Logits", "Loss"),),
        )
    )
    registry.register_op(
        OpDef(
            "sigmoid_cross_entropy_with_logits",
            ["X", "Label"],
            ["Out"],
            {"ignore_index": Attr(int, -100), "normalize": Attr(bool, False)},
            infer_shape=_infer_sce,
            grad=GradSpec(("X", "Label", "Out@GRAD"), ("X@GRAD",)),
            share_lod=(("X", "Out"),),
        )
    )
    registry.register_op(
        OpDef(
            "log_loss",
            ["Predicted", "Labels"],
            ["Loss"],
            {"epsilon": Attr(float, 1e-4)},
            infer_shape=_infer_log_loss,
            grad=GradSpec(("Predicted", "Labels", "Loss@GRAD"), ("Predicted@GRAD",)),
        )
    )
    registry.register_op(
        OpDef(
            "huber_loss",
            ["X", "Y"],
            ["Residual", "Out"],
            {"delta": Attr(float, 1.0, lambda v: None if v > 0 else "must be > 0")},
            infer_shape=_infer_huber,
            grad=GradSpec(("Residual", "Out@GRAD"), ("X@GRAD", "Y@GRAD")),
        )
    )
    registry.register_op(
        OpDef(
            "smooth_l1_loss",
            ["X", "Y", "InsideWeight?", "OutsideWeight?"],
            ["Diff", "Out"],
            {"sigma": Attr(float, 1.0, lambda v: None if v > 0 else "must be > 0")},
            infer_shape=_infer_smooth_l1,
            grad=GradSpec(
                ("InsideWeight", "OutsideWeight", "Diff", "Out@GRAD"), ("X@GRAD", "Y@GRAD")
            ),
        )
    )
    registry.register_op(
        OpDef(
            "bpr_loss",
            ["X", "Label"],
            ["Y"],
            {},
            infer_shape=_infer_bpr,
            grad=GradSpec(("X", "Label", "Y@GRAD"), ("X@GRAD",)),
            share_lod=(("X", "Y"),),
        )
    )
    registry.register_op(
        OpDef(
            "kldiv_loss",
            ["X", "Target"],
            ["Loss"],
            {"reduction": Attr(str, "mean", one_of("none", "batchmean", "mean", "sum"))},
            infer_shape=_infer_kldiv,
            grad=GradSpec(("X", "Target", "Loss@GRAD"), ("X@GRAD",)),
        )
    )
    registry.register_op(
        OpDef(
            "teacher_student_sigmoid_loss",
            ["X", "Label"],
            ["Y"],
            {"soft_max_up_bound": Attr(float, 15.0), "soft_max_lower_bound": Attr(float, -15.0)},
            infer_shape=_infer_tss,
            grad=GradSpec(("X", "Label", "Y@GRAD"), ("X@GRAD",)),
        )
    )
    registry.register_op(
        OpDef(
            "sigmoid_focal_loss",
            ["X", "Label", "FgNum"],
            ["Out"],
            {"gamma": Attr(float, 2.0), "alpha": Attr(float, 0.25)},
            infer_shape=_infer_focal,
            grad=GradSpec(("X", "Label", "FgNum", "Out@GRAD"), ("X@GRAD",)),
        )
    )


def register(registry) -> None:
    _register_loss(registry)
    _register_losses(registry)
