"""``rewrite_program``: float16 compute for the white-list ops of a forward program, as
Fluid 1.8's AMP rewrites it (cast in, cast out).

Each op of the global block gets a precision, in program order:

- white-list ops compute in float16;
- gray-list ops compute in float16 when one of their float inputs is float16 by then;
- black-list ops, ops in no list, and ops that write persistable variables (batch_norm's
  running statistics) compute in float32;
- an op whose kernel has no float16 version (on the CPU device) stays float32.

A float16 op gets a ``cast`` to float16 before it for each float32 input (one cast per
variable, reused until the variable is written again) and its float32 outputs become
float16; a float32 op gets casts back for its float16 inputs. Parameters stay float32 (the
master weights): their float16 copies are casts, whose gradients cast back.
"""

from __future__ import annotations

from typing import Any

from oar.fluid.contrib.mixed_precision.fp16_lists import AutoMixedPrecisionLists

__all__ = ["rewrite_program"]

FP16, FP32 = "float16", "float32"
_SUFFIX = {FP16: "cast_fp16", FP32: "cast_fp32"}


def _has_fp16_kernel(op_type: str) -> bool:
    from oar.plugins import registries

    reg = registries()
    if reg.kernels.lookup(op_type, "cpu", FP16) is None:
        return False
    grad = f"{op_type}_grad"
    return grad not in reg.ops or reg.kernels.lookup(grad, "cpu", FP16) is not None


def _float_inputs(op: Any, block: Any) -> list:
    out = []
    for name in dict.fromkeys(op.input_arg_names):
        var = block._find_var_recursive(name)
        if var is not None and var.dtype in (FP16, FP32):
            out.append(var)
    return out


def _precision(op: Any, block: Any, lists: AutoMixedPrecisionLists) -> str | None:
    """FP16 / FP32 for an op to rewrite, None for one to leave alone."""
    if op.type == "cast" or any(k in op.attrs for k in ("sub_block", "sub_blocks")):
        return None
    if op.type in lists.black_list or op.type not in lists.white_list | lists.gray_list:
        return FP32
    writes_state = any(
        getattr(block._find_var_recursive(n), "persistable", False) for n in op.output_arg_names
    )
    if writes_state or not _has_fp16_kernel(op.type):
        return FP32
    if op.type in lists.white_list:
        return FP16
    return FP16 if any(v.dtype == FP16 for v in _float_inputs(op, block)) else FP32


def rewrite_program(main_prog: Any, amp_lists: AutoMixedPrecisionLists | None = None) -> None:
    """Rewrite the forward ops of ``main_prog``'s global block in place (see the module)."""
    lists = amp_lists or AutoMixedPrecisionLists()
    block = main_prog.global_block()
    casts: dict = {}  # (variable, dtype) -> name of its cast
    i = 0
    while i < len(block.ops):
        op = block.ops[i]
        want = _precision(op, block, lists)
        if want is not None:
            src = FP32 if want == FP16 else FP16
            for var in _float_inputs(op, block):
                if var.dtype != src:
                    continue
                key = (var.name, want)
                if key not in casts:
                    out = block.create_var(
                        name=f"{var.name}.{_SUFFIX[want]}",
                        shape=var.shape,
                        dtype=want,
                        lod_level=var.lod_level,
                    )
                    out.stop_gradient = var.stop_gradient
                    block._insert_op(
                        i, "cast", {"X": [var]}, {"Out": [out]},
                        {"in_dtype": src, "out_dtype": want},
                    )  # fmt: skip
                    i += 1
                    casts[key] = out.name
                op._rename_input(var.name, casts[key])
            if want == FP16:
                for name in op.output_arg_names:
                    var = block._find_var_recursive(name)
                    if var is not None and var.dtype == FP32:
                        var.dtype = FP16
        for name in op.output_arg_names:  # a written variable's old casts are stale
            casts.pop((name, FP16), None)
            casts.pop((name, FP32), None)
        i += 1
