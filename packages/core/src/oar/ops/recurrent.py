"""Recurrent ops over LoD sequences: lstm (Fluid's dynamic_lstm) and gru (dynamic_gru).

The input is already projected (``fc`` to 4H or 3H columns); every sequence of the last
LoD level runs its own recurrence, all sequences batched per time step. Gate order and
weight layouts are Fluid's: lstm columns are {candidate, input, forget, output}, its
peephole weights {W_ic, W_fc, W_oc} follow the 4H bias in a [1, 7H] bias; gru columns are
{update, reset, candidate}, its [H, 3H] weight stored flat as [H, 2H] gate weights then
[H, H] candidate weights. The intermediate outputs (BatchGate, ...) are kept in row order.
"""

from __future__ import annotations

from oar.ops._infer import check_float, check_same_dtype, meta, one_of
from oar.registry import Attr, GradSpec, OpDef

ACTIVATIONS = ("sigmoid", "tanh", "relu", "identity")


def _act(default: str) -> Attr:
    return Attr(str, default, one_of(*ACTIVATIONS))


def _check_hidden(ins, slot: str, h: int) -> None:
    m = ins.get(slot)
    if m is not None and (len(m.shape) != 2 or m.shape[1] not in (h, -1)):
        raise ValueError(f"{slot} must be [num_sequences, {h}], given {list(m.shape)}")


def _infer_lstm(ins, attrs):
    x, w = ins["Input"], ins["Weight"]
    check_float(ins, "Input")
    check_same_dtype(ins, "Input", "Weight")
    if len(w.shape) != 2 or w.shape[1] != 4 * w.shape[0]:
        raise ValueError(f"Weight must be [H, 4H], given {list(w.shape)}")
    h = w.shape[0]
    if len(x.shape) != 2 or x.shape[1] not in (4 * h, -1):
        raise ValueError(f"Input must be [rows, 4H] = [rows, {4 * h}], given {list(x.shape)}")
    want = 7 * h if attrs["use_peepholes"] else 4 * h
    b = ins["Bias"]
    if tuple(b.shape) != (1, want):
        raise ValueError(
            f"Bias must be [1, {want}] (use_peepholes={attrs['use_peepholes']}), given {list(b.shape)}"
        )
    _check_hidden(ins, "H0", h)
    _check_hidden(ins, "C0", h)
    level = max(x.lod_level, 1)
    return {
        "Hidden": meta((-1, h), x.dtype, level),
        "Cell": meta((-1, h), x.dtype, level),
        "BatchGate": meta((-1, 4 * h), x.dtype),
        "BatchCellPreAct": meta((-1, h), x.dtype),
    }


def _infer_gru(ins, attrs):
    x, w = ins["Input"], ins["Weight"]
    check_float(ins, "Input")
    check_same_dtype(ins, "Input", "Weight")
    if len(w.shape) != 2 or w.shape[1] != 3 * w.shape[0]:
        raise ValueError(f"Weight must be [H, 3H], given {list(w.shape)}")
    h = w.shape[0]
    if len(x.shape) != 2 or x.shape[1] not in (3 * h, -1):
        raise ValueError(f"Input must be [rows, 3H] = [rows, {3 * h}], given {list(x.shape)}")
    b = ins.get("Bias")
    if b is not None and tuple(b.shape) != (1, 3 * h):
        raise ValueError(f"Bias must be [1, {3 * h}], given {list(b.shape)}")
    _check_hidden(ins, "H0", h)
    level = max(x.lod_level, 1)
    return {
        "Hidden": meta((-1, h), x.dtype, level),
        "BatchGate": meta((-1, 3 * h), x.dtype),
        "BatchResetHiddenPrev": meta((-1, h), x.dtype),
        "BatchHidden": meta((-1, h), x.dtype),
    }


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "lstm",
            ["Input", "H0?", "C0?", "Weight", "Bias"],
            ["Hidden", "Cell", "BatchGate", "BatchCellPreAct"],
            {
                "use_peepholes": Attr(bool, True),
                "is_reverse": Attr(bool, False),
                "gate_activation": _act("sigmoid"),
                "cell_activation": _act("tanh"),
                "candidate_activation": _act("tanh"),
            },
            infer_shape=_infer_lstm,
            kernel_dtype="Input",
            grad=GradSpec(
                (
                    "Hidden@GRAD",
                    "Cell@GRAD",
                    "Input",
                    "H0",
                    "C0",
                    "Weight",
                    "Bias",
                    "Hidden",
                    "Cell",
                    "BatchGate",
                ),
                ("Input@GRAD", "H0@GRAD", "C0@GRAD", "Weight@GRAD", "Bias@GRAD"),
            ),
            doc="LSTM over every sequence (Fluid's dynamic_lstm)",
        )
    )
    registry.register_op(
        OpDef(
            "gru",
            ["Input", "H0?", "Weight", "Bias?"],
            ["BatchGate", "BatchResetHiddenPrev", "BatchHidden", "Hidden"],
            {
                "activation": _act("tanh"),
                "gate_activation": _act("sigmoid"),
                "is_reverse": Attr(bool, False),
                "origin_mode": Attr(bool, False),
            },
            infer_shape=_infer_gru,
            kernel_dtype="Input",
            grad=GradSpec(
                (
                    "Hidden@GRAD",
                    "Input",
                    "H0",
                    "Weight",
                    "Bias",
                    "BatchGate",
                    "BatchResetHiddenPrev",
                    "Hidden",
                ),
                ("Input@GRAD", "H0@GRAD", "Weight@GRAD", "Bias@GRAD"),
            ),
            doc="GRU over every sequence (Fluid's dynamic_gru)",
        )
    )
