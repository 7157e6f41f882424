"""hash (Fluid 1.8 signature): ``num_hash`` XXH64 hashes of every row, modulo ``hash_size``.

Fluid 1.8.5's own ``layers.hash`` cannot be called (its argument check raises TypeError);
oar follows the documented contract and the hash op's numbers, as Fluid 1.8.5 computes
them when the op is appended directly.
"""

from __future__ import annotations

from typing import Any

from oar.layer_helper import LayerHelper, check_variable

__all__ = ["hash"]


def hash(input: Any, hash_size: int, num_hash: int = 1, name: str | None = None) -> Any:
    """Out[i, k, 0] = XXH64(bytes of row i of ``input``, seed k) % ``hash_size``, for k <
    ``num_hash``: [rows, num_hash, 1] int64, with input's LoD."""
    check_variable("hash", "input", input)
    for arg, v in (("hash_size", hash_size), ("num_hash", num_hash)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"hash: {arg} must be a positive int, given {v!r}")
    helper = LayerHelper("hash", name=name)
    out = helper.create_variable_for_type_inference("int64", stop_gradient=True)
    helper.append_op(
        "hash", {"X": [input]}, {"Out": [out]}, {"num_hash": num_hash, "mod_by": hash_size}
    )
    return out
