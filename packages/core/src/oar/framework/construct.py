"""Building a :class:`Program` from plain descriptions (what a model-file reader produces).

A plugin that reads a program from a file (``oar-io``'s ProgramDesc and JSON
readers) describes blocks, variables and ops as dicts and lets core build the
IR objects, so it never constructs ``Block``/``Variable``/``Operator`` by hand
and keeps working when their constructors change.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from oar.framework.program import PROGRAM_FORMAT, PROGRAM_VERSION, Program

_VAR_DEFAULTS: dict[str, Any] = {
    "kind": "variable",
    "shape": None,
    "dtype": None,
    "lod_level": 0,
    "persistable": False,
    "stop_gradient": False,
    "type": "lod_tensor",
    "need_check_feed": False,
    "is_data": False,
}
_PARAM_DEFAULTS: dict[str, Any] = {"trainable": True, "persistable": True}
_VAR_KEYS = frozenset(_VAR_DEFAULTS)
_PARAM_KEYS = _VAR_KEYS | {
    "trainable",
    "optimize_attr",
    "regularizer",
    "do_model_average",
    "is_distributed",
}


def _var(vd: Mapping[str, Any], where: str) -> dict:
    if "name" not in vd:
        raise ValueError(f"{where}: a variable description needs a 'name', given {dict(vd)!r}")
    kind = vd.get("kind", "variable")
    if kind not in ("variable", "parameter"):
        raise ValueError(
            f"{where}: variable '{vd['name']}' has kind {kind!r}; expected 'variable' or 'parameter'"
        )
    allowed = (_PARAM_KEYS if kind == "parameter" else _VAR_KEYS) | {"name"}
    unknown = sorted(set(vd) - allowed)
    if unknown:
        raise ValueError(
            f"{where}: variable '{vd['name']}' has unknown keys {unknown}; allowed: {sorted(allowed)}"
        )
    out = dict(_VAR_DEFAULTS)
    if kind == "parameter":
        out.update(_PARAM_DEFAULTS)
    out.update(vd)
    if out["shape"] is not None:
        out["shape"] = [int(d) for d in out["shape"]]
    return out


def _op(od: Mapping[str, Any], where: str) -> dict:
    if "type" not in od:
        raise ValueError(f"{where}: an op description needs a 'type', given {dict(od)!r}")
    return {
        "type": od["type"],
        "inputs": {k: list(v) for k, v in (od.get("inputs") or {}).items()},
        "outputs": {k: list(v) for k, v in (od.get("outputs") or {}).items()},
        "attrs": dict(od.get("attrs") or {}),
    }


def build_program(blocks: Sequence[Mapping[str, Any]], random_seed: int = 0) -> Program:
    """A :class:`Program` from block descriptions.

    Each block is ``{"idx", "parent_idx", "forward_block_idx", "vars": [...],
    "ops": [...]}`` (indices default to the block's position, ``-1`` for the
    parent of block 0 and for the forward block). A variable is a dict of
    :class:`~oar.framework.variable.Variable` fields (``name`` required;
    ``kind="parameter"`` makes a Parameter, which also takes ``trainable``,
    ``optimize_attr``, ``regularizer``...); an op is ``{"type", "inputs",
    "outputs", "attrs"}`` with variable names per slot. Attrs are taken as
    given: complete them with ``OpDef.complete_attrs`` first if they come from
    another framework's file.
    """
    if not blocks:
        raise ValueError("build_program: a program needs at least one block (the global block)")
    descs = []
    for i, bd in enumerate(blocks):
        where = f"build_program: block {i}"
        descs.append(
            {
                "idx": int(bd.get("idx", i)),
                "parent_idx": int(bd.get("parent_idx", -1 if i == 0 else 0)),
                "forward_block_idx": int(bd.get("forward_block_idx", -1)),
                "vars": [_var(vd, where) for vd in bd.get("vars", ())],
                "ops": [_op(od, where) for od in bd.get("ops", ())],
            }
        )
    program = program_from_dict(
        {
            "format": PROGRAM_FORMAT,
            "version": PROGRAM_VERSION,
            "random_seed": int(random_seed),
            "blocks": descs,
        }
    )
    program._bump()
    return program


def program_from_dict(d: Mapping[str, Any]) -> Program:
    """The program that :meth:`Program.to_dict` described (raises ValueError on another format)."""
    return Program.from_dict(dict(d))


__all__ = ["build_program", "program_from_dict"]
