"""fluid.layers.similarity_focus."""

from __future__ import annotations

from oar.errors import ArgumentError
from oar.layer_helper import LayerHelper, check_variable

__all__ = ["similarity_focus"]


def similarity_focus(input, axis, indexes, name=None):
    """A 0/1 mask of ``input``'s shape marking, per index along ``axis`` (1, 2 or 3), the
    greedy distinct-row/column maxima of that slice (see the ``similarity_focus`` op)."""
    check_variable("similarity_focus", "input", input)
    if axis not in (1, 2, 3):
        raise ArgumentError("similarity_focus", f"axis must be 1, 2 or 3, given {axis!r}")
    if (
        not isinstance(indexes, (list, tuple))
        or not indexes
        or not all(isinstance(i, int) and not isinstance(i, bool) for i in indexes)
    ):
        raise ArgumentError(
            "similarity_focus", f"indexes must be a non-empty list of ints, given {indexes!r}"
        )
    helper = LayerHelper("similarity_focus", name=name)
    out = helper.create_variable_for_type_inference(input.dtype, stop_gradient=True)
    helper.append_op(
        "similarity_focus", {"X": [input]}, {"Out": [out]}, {"axis": axis, "indexes": list(indexes)}
    )
    return out
