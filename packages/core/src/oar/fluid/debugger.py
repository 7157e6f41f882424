"""``fluid.debugger``: look at a program as text or as a Graphviz graph."""

from __future__ import annotations

from typing import Any

from oar.viz.graph import draw_block_graphviz

__all__ = ["draw_block_graphviz", "pprint_program_codes", "pprint_block_codes"]


def pprint_block_codes(block: Any, show_backward: bool = False) -> str:
    """Print one block's ops and variables (``show_backward=False`` hides ``*_grad`` ops)."""
    lines = [f"block {block.idx} (parent {block.parent_idx})"]
    for name, var in block.vars.items():
        lines.append(
            f"  var {name}: {var.shape} {var.dtype}{' persistable' if var.persistable else ''}"
        )
    for op in block.ops:
        if not show_backward and op.type.endswith("_grad"):
            continue
        lines.append(f"  {op}")
    text = "\n".join(lines)
    print(text)
    return text


def pprint_program_codes(program: Any) -> str:
    """Print every block of ``program`` (Fluid 1.8 takes the desc; a Program works as well)."""
    program = getattr(program, "_program", program)
    return "\n".join(pprint_block_codes(b) for b in program.blocks)
