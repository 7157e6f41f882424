"""Kernels of affine_channel."""

from __future__ import annotations

from oar_kernels_cpu.kernels import FLOATS, array_module, kernel

xp = array_module(__name__)


def _shape(x, attrs) -> tuple:
    """The shape [C] broadcasts to: along axis 1 (NCHW) or the last axis (NHWC)."""
    if attrs["data_layout"] == "NHWC":
        return (1,) * (x.ndim - 1) + (-1,)
    return (1, -1) + (1,) * (x.ndim - 2)


@kernel("affine_channel", FLOATS)
def affine_channel(inputs, attrs):
    x = inputs["X"]
    shape = _shape(x, attrs)
    return {"Out": x * inputs["Scale"].reshape(shape) + inputs["Bias"].reshape(shape)}


@kernel("affine_channel_grad", FLOATS, wants_outputs=True)
def affine_channel_grad(inputs, attrs, wanted=frozenset({"X@GRAD", "Scale@GRAD", "Bias@GRAD"})):
    x, dout = inputs["X"], inputs["Out@GRAD"]
    shape = _shape(x, attrs)
    axes = tuple(
        i for i in range(x.ndim) if i != (x.ndim - 1 if attrs["data_layout"] == "NHWC" else 1)
    )
    out = {}
    if "X@GRAD" in wanted:
        out["X@GRAD"] = dout * inputs["Scale"].reshape(shape)
    if "Scale@GRAD" in wanted:
        out["Scale@GRAD"] = (dout * x).sum(axis=axes)
    if "Bias@GRAD" in wanted:
        out["Bias@GRAD"] = dout.sum(axis=axes)
    return out
