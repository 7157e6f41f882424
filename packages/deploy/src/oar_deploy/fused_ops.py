"""Inference-only fused ops the passes rewrite to: ``fc`` and ``conv2d_fusion`` (as in Fluid 1.8).

They have no gradient (inference programs are never differentiated) and no
shape inference of their own: a pass creates them over the variables of the
ops they replace, which already carry their shapes. Their CPU kernels do the
bias add and the activation in place on the GEMM/convolution output, so a
fused op allocates one array where the unfused chain allocated two or three.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from oar.api import Attr, OpDef, registries

# activations a fused op may apply; each works in place on a float array
FUSABLE_ACTS = ("relu", "sigmoid", "tanh")


def _act_inplace(out: np.ndarray, act: str) -> np.ndarray:
    if act == "relu":
        np.maximum(out, 0, out=out)
    elif act == "tanh":
        np.tanh(out, out=out)
    elif act == "sigmoid":
        np.negative(out, out=out)
        np.exp(out, out=out)
        out += 1
        np.reciprocal(out, out=out)
    elif act not in ("", "identity"):
        raise ValueError(f"fused op: unsupported activation '{act}'; supported: {FUSABLE_ACTS}")
    return out


def fc_kernel(inputs: dict, attrs: dict) -> dict:
    x, w, bias = inputs["Input"], inputs["W"], inputs.get("Bias")
    k = attrs["in_num_col_dims"]
    if x.ndim == 2 and k == 1:  # the common case: no reshapes (µs count at batch 1)
        out = x @ w
    else:
        lead = x.shape[:k]
        out = (x.reshape(math.prod(lead), -1) @ w).reshape(*lead, w.shape[1])
    if bias is not None:
        out += bias
    act = attrs["activation_type"]
    if act == "relu":
        np.maximum(out, 0, out=out)
    elif act:
        _act_inplace(out, act)
    return {"Out": out}


_CONV_ATTRS = (
    "strides",
    "paddings",
    "dilations",
    "groups",
    "padding_algorithm",
    "data_format",
)


def conv2d_fusion_kernel(inputs: dict, attrs: dict) -> dict:
    x = inputs["Input"]
    # the convolution itself is whatever conv2d kernel is registered (oar-kernels-cpu's
    # im2col + GEMM, or a faster one a plugin installed): looked up once per dtype
    entry = _conv_kernels.get(x.dtype)
    if entry is None:
        entry = registries().kernels.lookup("conv2d", "cpu", str(x.dtype))
        if entry is None:
            raise ValueError(f"conv2d_fusion: no conv2d kernel for {x.dtype} on cpu")
        _conv_kernels[x.dtype] = entry
    conv_attrs = registries().ops.get("conv2d").complete_attrs({k: attrs[k] for k in _CONV_ATTRS})
    out = entry.kernel({"Input": x, "Filter": inputs["Filter"]}, conv_attrs)["Output"]
    if not out.flags.writeable or not out.flags.owndata:
        out = out.copy()
    bias = inputs.get("Bias")
    if bias is not None:
        if attrs["data_format"] == "NHWC":
            out += bias
        else:
            out += bias.reshape(1, -1, 1, 1)
    _act_inplace(out, attrs["activation"])
    return {"Output": out}


_conv_kernels: dict[Any, Any] = {}


def register_ops(registry: Any) -> None:
    registry.register_op(
        OpDef(
            "fc",
            ["Input", "W", "Bias?"],
            ["Out"],
            {
                "in_num_col_dims": Attr(int, 1),
                "activation_type": Attr(str, ""),
                "use_mkldnn": Attr(bool, False),
            },
            doc="fused mul + bias add + activation (made by fc_fuse_pass; inference only)",
        )
    )
    conv = {
        "strides": Attr(list, [1, 1]),
        "paddings": Attr(list, [0, 0]),
        "dilations": Attr(list, [1, 1]),
        "groups": Attr(int, 1),
        "padding_algorithm": Attr(str, "EXPLICIT"),
        "data_format": Attr(str, "NCHW"),
        "activation": Attr(str, "identity"),
        "is_test": Attr(bool, True),
    }
    registry.register_op(
        OpDef(
            "conv2d_fusion",
            ["Input", "Filter", "Bias?"],
            ["Output"],
            conv,
            doc="fused conv2d + bias add + activation (made by "
            "conv_elementwise_add_act_fuse_pass; inference only)",
        )
    )


def register_kernels(registry: Any) -> None:
    registry.register_kernel("fc", "cpu", ("float32", "float64"), fc_kernel)
    registry.register_kernel("conv2d_fusion", "cpu", ("float32", "float64"), conv2d_fusion_kernel)
