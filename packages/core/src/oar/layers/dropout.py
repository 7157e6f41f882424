"""The dropout layer (Fluid 1.5-1.8 signature and defaults)."""

from __future__ import annotations

from typing import Any

from oar.errors import ArgumentError
from oar.layer_helper import LayerHelper, check_variable

__all__ = ["dropout"]


def dropout(
    x: Any,
    dropout_prob: float,
    is_test: bool = False,
    seed: int | None = None,
    name: str | None = None,
    dropout_implementation: str = "downgrade_in_infer",
) -> Any:
    """Zero each element with probability ``dropout_prob`` in training.

    ``downgrade_in_infer`` scales by ``1 - dropout_prob`` at inference;
    ``upscale_in_train`` scales kept elements by ``1 / (1 - dropout_prob)`` in
    training. A ``seed`` (or the program's ``random_seed``) fixes the mask.
    """
    helper = LayerHelper("dropout", name=name)
    check_variable("dropout", "x", x)
    if (
        isinstance(dropout_prob, bool)
        or not isinstance(dropout_prob, (int, float))
        or not 0 <= dropout_prob <= 1
    ):
        raise ArgumentError(
            "dropout", f"dropout_prob must be a float in [0, 1], given {dropout_prob!r}"
        )
    if dropout_implementation not in ("downgrade_in_infer", "upscale_in_train"):
        raise ArgumentError(
            "dropout",
            "dropout_implementation must be 'downgrade_in_infer' or 'upscale_in_train', "
            f"given {dropout_implementation!r}",
        )
    if (seed is None or seed == 0) and helper.main_program.random_seed != 0:
        seed = helper.main_program.random_seed
    out = helper.create_variable_for_type_inference(x.dtype)
    mask = helper.create_variable_for_type_inference("uint8", stop_gradient=True)
    helper.append_op(
        "dropout",
        {"X": [x]},
        {"Out": [out], "Mask": [mask]},
        {
            "dropout_prob": float(dropout_prob),
            "is_test": bool(is_test),
            "fix_seed": seed is not None,
            "seed": int(seed) if seed is not None else 0,
            "dropout_implementation": dropout_implementation,
        },
    )
    return out
