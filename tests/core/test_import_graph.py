"""The import graph keeps its seams: the IR imports no layers, static code no dygraph.

Read with ``ast`` (every ``import`` / ``from ... import``, at any depth, lazy ones
included), so a lazy import inside a function counts as much as a top-level one.
"""

from __future__ import annotations

import ast
from pathlib import Path

OAR = Path(__file__).resolve().parents[2] / "packages/core/src/oar"


def _imports(path: Path, pkg: str | None = None) -> list:
    """(line, module) for every import in ``path``, relative imports resolved."""
    tree = ast.parse(path.read_text(), str(path))
    pkg = pkg or ".".join(("oar",) + path.relative_to(OAR).parent.parts)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = pkg.split(".")[: len(pkg.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            found.append((node.lineno, base))
            found += [(node.lineno, f"{base}.{a.name}") for a in node.names]
    return found


def _files(*rel: str) -> list:
    out = []
    for r in rel:
        p = OAR / r
        out += sorted(p.rglob("*.py")) if p.is_dir() else [p]
    return out


def _offenders(files: list, banned: tuple) -> list:
    return [
        f"{f.relative_to(OAR)}:{line} imports {mod}"
        for f in files
        for line, mod in _imports(f)
        if any(mod == b or mod.startswith(b + ".") for b in banned)
    ]


def test_the_ir_imports_no_layers_dygraph_or_optimizer():
    bad = _offenders(_files("framework"), ("oar.layers", "oar.dygraph", "oar.optimizer"))
    assert not bad, bad


STATIC = (
    "layer_helper.py",
    "layers",
    "optimizer",
    "clip.py",
    "regularizer.py",
    "initializer.py",
    "nets.py",
    "backward.py",
    "framework",
)


def test_static_code_imports_no_dygraph():
    bad = _offenders(_files(*STATIC), ("oar.dygraph",))
    assert not bad, bad


def test_static_code_does_not_ask_for_the_mode():
    """Layers and optimizers hand ops to the current builder instead of branching on the mode."""
    bad = []
    for f in _files(*STATIC):
        if f.name == "mode.py" or f == OAR / "framework/__init__.py":
            continue  # where the mode is kept and re-exported
        tree = ast.parse(f.read_text())
        for node in ast.walk(tree):
            name = getattr(node, "id", None) or getattr(node, "attr", None)
            if name in ("in_dygraph_mode", "_dygraph_tracer"):
                bad.append(f"{f.relative_to(OAR)}:{node.lineno} uses {name}")
    assert not bad, bad


def test_the_checker_sees_lazy_and_relative_imports(tmp_path):
    """It would have caught the old lazy ``from oar.layers import math_op_patch`` in variable.py."""
    fake = tmp_path / "variable.py"
    fake.write_text(
        (OAR / "framework/variable.py").read_text()
        + "\n\ndef f():\n    from oar.layers import math_op_patch\n    from ..dygraph import nn\n"
    )
    mods = {m for _, m in _imports(fake, "oar.framework")}
    assert {"oar.layers.math_op_patch", "oar.dygraph.nn"} <= mods
