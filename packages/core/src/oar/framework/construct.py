"""Building a :class:`Program` from plain descriptions (what a model-file reader produces).

A plugin that reads a program from a file (``oar-io``'s ProgramDesc and JSON
readers) adds blocks, variables and ops through :class:`ProgramBuilder` (or
describes them as dicts for :func:`build_program`) and lets core create the IR
objects, so it never constructs ``Block``/``Variable``/``Operator`` by hand and
keeps working when their constructors change.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from oar.framework.block import Block
from oar.framework.operator import Operator
from oar.framework.program import Program
from oar.framework.variable import Parameter, Variable

_VAR_FIELDS = frozenset(
    {
        "shape",
        "dtype",
        "lod_level",
        "persistable",
        "stop_gradient",
        "type",
        "need_check_feed",
        "is_data",
    }
)
_PARAM_FIELDS = _VAR_FIELDS | {
    "trainable",
    "optimize_attr",
    "regularizer",
    "do_model_average",
    "is_distributed",
}


class ProgramBuilder:
    """Builds a :class:`Program` one block, variable and op at a time.

    For readers of untrusted or large files: each call validates its
    arguments and creates the IR object at once, so memory stays one object
    per variable/op. Blocks are numbered in the order they are added.
    """

    def __init__(self, random_seed: int = 0) -> None:
        self._program = Program()
        self._program.blocks = []
        self._program.random_seed = int(random_seed)

    def add_block(self, parent_idx: int | None = None, forward_block_idx: int = -1) -> int:
        """Add a block (``parent_idx`` defaults to -1 for block 0, else 0); returns its index."""
        idx = len(self._program.blocks)
        parent = (-1 if idx == 0 else 0) if parent_idx is None else int(parent_idx)
        if not -1 <= parent < idx:
            raise ValueError(f"block {idx}: parent block {parent} must be an earlier block or -1")
        self._program.blocks.append(Block(self._program, idx, parent, int(forward_block_idx)))
        return idx

    def _block(self, block: int) -> Block:
        if not 0 <= block < len(self._program.blocks):
            raise ValueError(f"block {block} does not exist (add_block first)")
        return self._program.blocks[block]

    def add_var(self, block: int, name: str, *, kind: str = "variable", **fields: Any) -> None:
        """Declare variable ``name`` in ``block``; ``kind="parameter"`` makes a Parameter.

        ``fields`` are Variable fields (``shape``, ``dtype``, ``lod_level``,
        ``persistable``, ``stop_gradient``, ``type``, ``need_check_feed``,
        ``is_data``; a parameter also ``trainable``, ``optimize_attr``,
        ``regularizer``, ``do_model_average``, ``is_distributed``).
        """
        b = self._block(block)
        if not isinstance(name, str) or not name:
            raise ValueError(f"block {block}: a variable needs a non-empty name, given {name!r}")
        if name in b.vars:
            raise ValueError(f"block {block}: variable {name[:200]!r} is declared twice")
        if kind not in ("variable", "parameter"):
            raise ValueError(
                f"block {block}: variable {name[:200]!r} has kind {kind!r}; "
                f"expected 'variable' or 'parameter'"
            )
        allowed = _PARAM_FIELDS if kind == "parameter" else _VAR_FIELDS
        unknown = sorted(set(fields) - allowed)
        if unknown:
            raise ValueError(
                f"block {block}: variable {name[:200]!r} has unknown fields {unknown}; "
                f"allowed: {sorted(allowed)}"
            )
        stop = fields.pop("stop_gradient", None)
        cls = Parameter if kind == "parameter" else Variable
        v = cls(b, name, **fields)
        if stop is not None:
            v.stop_gradient = bool(stop)
        b.vars[name] = v

    def has_var(self, block: int, name: str) -> bool:
        return name in self._block(block).vars

    def set_var(self, block: int, name: str, **fields: Any) -> None:
        """Change fields of a declared variable (e.g. ``is_data=True`` once its feed op is seen)."""
        b = self._block(block)
        if name not in b.vars:
            raise ValueError(f"block {block}: variable {name[:200]!r} is not declared")
        v = b.vars[name]
        unknown = sorted(set(fields) - (_PARAM_FIELDS if isinstance(v, Parameter) else _VAR_FIELDS))
        if unknown:
            raise ValueError(f"block {block}: variable {name[:200]!r}: unknown fields {unknown}")
        for key, value in fields.items():
            setattr(v, key, value)

    def add_op(
        self,
        block: int,
        type: str,
        inputs: Mapping[str, Sequence[str]] | None = None,
        outputs: Mapping[str, Sequence[str]] | None = None,
        attrs: Mapping[str, Any] | None = None,
    ) -> None:
        """Append op ``type`` (variable names per slot; attrs taken as given) to ``block``."""
        b = self._block(block)
        if not isinstance(type, str) or not type:
            raise ValueError(f"block {block}: an op needs a non-empty type, given {type!r}")
        b.ops.append(
            Operator(
                b,
                type,
                {k: list(v) for k, v in (inputs or {}).items()},
                {k: list(v) for k, v in (outputs or {}).items()},
                dict(attrs or {}),
            )
        )

    def build(self) -> Program:
        """The program (at least one block); the builder must not be used afterwards."""
        if not self._program.blocks:
            raise ValueError("a program needs at least one block (the global block)")
        program, self._program = self._program, None  # type: ignore[assignment]
        program.current_block_idx = 0
        program._bump()
        return program


def build_program(blocks: Sequence[Mapping[str, Any]], random_seed: int = 0) -> Program:
    """A :class:`Program` from block descriptions (a convenience over :class:`ProgramBuilder`).

    Each block is ``{"parent_idx", "forward_block_idx", "vars": [...],
    "ops": [...]}`` (``parent_idx`` defaults to -1 for block 0, else 0). A
    variable is a dict with ``name``, optional ``kind`` (``"parameter"``) and
    the fields :meth:`ProgramBuilder.add_var` takes; an op is ``{"type",
    "inputs", "outputs", "attrs"}`` with variable names per slot. Attrs are
    taken as given: complete them with ``OpDef.complete_attrs`` first if they
    come from another framework's file.
    """
    builder = ProgramBuilder(random_seed)
    for bd in blocks:
        idx = builder.add_block(bd.get("parent_idx"), bd.get("forward_block_idx", -1))
        for vd in bd.get("vars", ()):
            fields = dict(vd)
            name = fields.pop("name", None)
            builder.add_var(idx, name, **fields)  # type: ignore[arg-type]
        for od in bd.get("ops", ()):
            if "type" not in od:
                raise ValueError(f"block {idx}: an op description needs a 'type', given {od!r}")
            builder.add_op(idx, od["type"], od.get("inputs"), od.get("outputs"), od.get("attrs"))
    return builder.build()


def program_from_dict(d: Mapping[str, Any]) -> Program:
    """The program that :meth:`Program.to_dict` described (raises ValueError on another format)."""
    return Program.from_dict(dict(d))


__all__ = ["ProgramBuilder", "build_program", "program_from_dict"]
