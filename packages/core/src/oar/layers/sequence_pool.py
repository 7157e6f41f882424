"""Sequence pooling layers (Fluid 1.8 ``layers/sequence_lod.py`` signatures).

Each sequence of the input's last LoD level becomes one row; an empty sequence
gives ``pad_value``. A two-level input pools the inner level and keeps the outer.
"""

from __future__ import annotations

from typing import Any

from oar.layer_helper import LayerHelper, check_variable
from oar.ops.sequence_pool import POOL_TYPES

__all__ = ["sequence_pool", "sequence_first_step", "sequence_last_step", "sequence_softmax"]


def sequence_pool(input: Any, pool_type: str, is_test: bool = False, pad_value: float = 0.0) -> Any:
    """Pool every sequence: ``sum``, ``average``, ``sqrt`` (sum / sqrt(len)), ``max``,
    ``last`` or ``first``. Example: ``fluid.layers.sequence_pool(emb, "max")``."""
    check_variable("sequence_pool", "input", input)
    kind = pool_type.upper() if isinstance(pool_type, str) else pool_type
    if kind not in POOL_TYPES:
        raise ValueError(
            f"sequence_pool: pool_type must be one of "
            f"{[p.lower() for p in POOL_TYPES]}, given {pool_type!r}"
        )
    helper = LayerHelper("sequence_pool")
    out = helper.create_variable_for_type_inference(input.dtype)
    index = helper.create_variable_for_type_inference("int32", stop_gradient=True)
    helper.append_op(
        "sequence_pool",
        {"X": [input]},
        {"Out": [out], "MaxIndex": [index]},
        {"pooltype": kind, "is_test": bool(is_test), "pad_value": float(pad_value)},
    )
    return out


def sequence_first_step(input: Any) -> Any:
    """The first row of every sequence (``sequence_pool(input, "first")``)."""
    return sequence_pool(input, "first")


def sequence_last_step(input: Any) -> Any:
    """The last row of every sequence (``sequence_pool(input, "last")``)."""
    return sequence_pool(input, "last")


def sequence_softmax(input: Any, use_cudnn: bool = False, name: str | None = None) -> Any:
    """Softmax within each sequence of an [N, 1] (or [N]) LoDTensor."""
    check_variable("sequence_softmax", "input", input)
    helper = LayerHelper("sequence_softmax", name=name)
    out = helper.create_variable_for_type_inference(input.dtype)
    helper.append_op(
        "sequence_softmax", {"X": [input]}, {"Out": [out]}, {"use_cudnn": bool(use_cudnn)}
    )
    return out
