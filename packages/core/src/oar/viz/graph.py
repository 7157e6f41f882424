"""Programs as Graphviz DOT: ops as boxes, variables as ellipses (with shapes), parameters
highlighted, sub-blocks as clusters. The DOT text needs no library; rendering needs the
``graphviz`` package and its ``dot`` program."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

PARAM_STYLE = 'shape=ellipse, style=filled, fillcolor="#ffe08a"'
VAR_STYLE = "shape=ellipse"
HIGHLIGHT_STYLE = 'shape=ellipse, style="filled,bold", fillcolor="#f4a6a6"'
OP_STYLE = 'shape=box, style="rounded,filled", fillcolor="#cfe2f3"'


def _q(text: str) -> str:
    return json.dumps(str(text))  # a DOT ID in double quotes, with \" and \\ escaped


def _var_label(block: Any, name: str, show_shapes: bool) -> str:
    var = block._find_var_recursive(name) if hasattr(block, "_find_var_recursive") else None
    if var is None or not show_shapes or var.shape is None:
        return name
    return f"{name}\\n{list(var.shape)} {var.dtype or ''}".rstrip()


def _sub_blocks(op: Any) -> list:
    """The blocks an op runs: Block objects, or block indices in attrs named like Fluid's
    ``sub_block`` (while, conditional_block) and ``optimize_blocks`` (listen_and_serv)."""
    program = getattr(getattr(op, "block", None), "program", None)
    found = []
    for key, value in op.attrs.items():
        for item in value if isinstance(value, (list, tuple)) else (value,):
            if hasattr(item, "ops") and hasattr(item, "idx"):
                found.append(item)
            elif (
                "block" in key
                and isinstance(item, int)
                and not isinstance(item, bool)
                and program is not None
                and 0 < item < len(program.blocks)
            ):
                found.append(program.blocks[item])
    return found


class _DotBuilder:
    def __init__(self, show_shapes: bool, highlights: set) -> None:
        self.show_shapes = show_shapes
        self.highlights = highlights
        self.lines: list = []
        self.declared: set = set()

    def var(self, block: Any, name: str, indent: str) -> str:
        node = f"var:{name}"
        if node not in self.declared:
            self.declared.add(node)
            var = block._find_var_recursive(name) if hasattr(block, "_find_var_recursive") else None
            style = (
                HIGHLIGHT_STYLE
                if name in self.highlights
                else PARAM_STYLE
                if var is not None and type(var).__name__ == "Parameter"
                else VAR_STYLE
            )
            label = _var_label(block, name, self.show_shapes)
            self.lines.append(f"{indent}{_q(node)} [label={_q(label)}, {style}];")
        return node

    def block(self, block: Any, indent: str) -> None:
        for i, op in enumerate(block.ops):
            node = f"op:{block.idx}:{i}"
            self.lines.append(f"{indent}{_q(node)} [label={_q(op.type)}, {OP_STYLE}];")
            for names in op.inputs.values():
                for name in names:
                    self.lines.append(f"{indent}{_q(self.var(block, name, indent))} -> {_q(node)};")
            for names in op.outputs.values():
                for name in names:
                    self.lines.append(f"{indent}{_q(node)} -> {_q(self.var(block, name, indent))};")
            for sub in _sub_blocks(op):
                self.lines.append(f"{indent}subgraph {_q(f'cluster_block_{sub.idx}')} {{")
                self.lines.append(f"{indent}  label={_q(f'block {sub.idx} ({op.type})')};")
                self.block(sub, indent + "  ")
                self.lines.append(f"{indent}}}")


def program_to_dot(
    program: Any,
    block_idx: int = 0,
    show_shapes: bool = True,
    highlights: Any = None,
    name: str = "program",
) -> str:
    """DOT text of one block of ``program`` (a Program or a Block) and the sub-blocks its ops
    run. ``highlights``: variable names drawn in red (Fluid's ``draw_block_graphviz``)."""
    block = program.block(block_idx) if hasattr(program, "block") else program
    builder = _DotBuilder(show_shapes, set(highlights or ()))
    builder.block(block, "  ")
    header = [f"digraph {_q(name)} {{", "  rankdir=TB;", '  node [fontname="Helvetica"];']
    return "\n".join(header + builder.lines + ["}"]) + "\n"


def draw_block_graphviz(block: Any, highlights: Any = None, path: str = "./temp.dot") -> str:
    """Fluid's ``fluid.debugger.draw_block_graphviz``: write ``block`` as DOT to ``path``; when
    the ``graphviz`` package and its ``dot`` program are installed, also render ``path``.pdf."""
    text = program_to_dot(block, highlights=highlights)
    Path(path).write_text(text)
    try:
        import graphviz

        graphviz.Source(text).render(outfile=str(path) + ".pdf", cleanup=True)
    except Exception:  # no graphviz package or no `dot` executable: the DOT file is the result
        pass
    return str(path)
