"""lstmp: Fluid's LSTM with a recurrent projection (dynamic_lstmp) over LoD sequences.

Each step runs the lstm op's cell (gate columns {candidate, input, forget, output},
peepholes in a [1, 7H] bias) fed by the previous *projection* r [P] instead of the hidden
state: ``gates = x_t + r_{t-1} @ Weight[P, 4H] + b``; then ``r_t = proj_act(h_t @
ProjWeight[H, P])``. ``cell_clip`` / ``proj_clip`` (> 0) clip c_t and r_t to [-clip, clip].
``H0`` is the initial projection [N, P], ``C0`` the initial cell [N, H].
"""

from __future__ import annotations

from oar.ops._infer import check_float, check_same_dtype, meta, one_of
from oar.ops.recurrent import ACTIVATIONS
from oar.registry import Attr, GradSpec, OpDef


def _infer(ins, attrs):
    x, w, pw = ins["Input"], ins["Weight"], ins["ProjWeight"]
    check_float(ins, "Input")
    check_same_dtype(ins, "Input", "Weight")
    if len(w.shape) != 2 or len(pw.shape) != 2:
        raise ValueError(
            f"Weight and ProjWeight must be 2-D, given {list(w.shape)}, {list(pw.shape)}"
        )
    h, p = pw.shape
    if tuple(w.shape) != (p, 4 * h):
        raise ValueError(f"Weight must be [P, 4H] = [{p}, {4 * h}], given {list(w.shape)}")
    if len(x.shape) != 2 or x.shape[1] not in (4 * h, -1):
        raise ValueError(f"Input must be [rows, 4H] = [rows, {4 * h}], given {list(x.shape)}")
    want = 7 * h if attrs["use_peepholes"] else 4 * h
    if tuple(ins["Bias"].shape) != (1, want):
        raise ValueError(
            f"Bias must be [1, {want}] (use_peepholes={attrs['use_peepholes']}), given "
            f"{list(ins['Bias'].shape)}"
        )
    for slot, width in (("H0", p), ("C0", h)):
        m = ins.get(slot)
        if m is not None and (len(m.shape) != 2 or m.shape[1] not in (width, -1)):
            raise ValueError(f"{slot} must be [num_sequences, {width}], given {list(m.shape)}")
    level = max(x.lod_level, 1)
    return {
        "Projection": meta((-1, p), x.dtype, level),
        "Cell": meta((-1, h), x.dtype, level),
        "BatchGate": meta((-1, 4 * h), x.dtype),
        "BatchCellPreAct": meta((-1, h), x.dtype),
        "BatchHidden": meta((-1, h), x.dtype),
    }


def _act(default: str) -> Attr:
    return Attr(str, default, one_of(*ACTIVATIONS))


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "lstmp",
            ["Input", "H0?", "C0?", "Weight", "ProjWeight", "Bias"],
            ["Projection", "Cell", "BatchGate", "BatchCellPreAct", "BatchHidden"],
            {
                "use_peepholes": Attr(bool, True),
                "is_reverse": Attr(bool, False),
                "cell_clip": Attr(float, 0.0),
                "proj_clip": Attr(float, 0.0),
                "gate_activation": _act("sigmoid"),
                "cell_activation": _act("tanh"),
                "candidate_activation": _act("tanh"),
                "proj_activation": _act("tanh"),
            },
            infer_shape=_infer,
            kernel_dtype="Input",
            grad=GradSpec(
                (
                    "Projection@GRAD",
                    "Cell@GRAD",
                    "Input",
                    "H0",
                    "C0",
                    "Weight",
                    "ProjWeight",
                    "Bias",
                    "Projection",
                    "Cell",
                    "BatchGate",
                    "BatchCellPreAct",
                    "BatchHidden",
                ),  # fmt: skip
                ("Input@GRAD", "H0@GRAD", "C0@GRAD", "Weight@GRAD", "ProjWeight@GRAD", "Bias@GRAD"),
            ),
            doc="LSTM with a recurrent projection over every sequence (Fluid's dynamic_lstmp)",
        )
    )
