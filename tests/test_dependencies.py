"""The development set-up is complete: nothing a package or a test imports is missing from it.

Worktree and CI virtual environments may see system site packages, which hides a dependency
nobody declared (pyzmq and scipy were missed that way). This test reads every import with
``ast`` and checks it against the declarations a fresh environment is built from:

- a package's import that runs when its module is imported (top level, not under ``try``) is in
  its ``dependencies``; any other import (lazy, inside a function or a ``try``) is in its
  ``dependencies`` or one of its extras (``[project.optional-dependencies]``);
- an import of the tests, benchmarks, tools or examples is in ``requirements-dev.txt`` or in
  the ``dependencies`` of a package that file installs.

Modules map to distributions through ``importlib.metadata.packages_distributions()``; a module
that is not installed here maps through :data:`NOT_INSTALLED` or, failing that, to the
distribution of the same name.
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib", reason="reading pyproject.toml needs Python 3.11+")

ROOT = Path(__file__).resolve().parents[1]
PACKAGE_DIRS = sorted(p.parent for p in (ROOT / "packages").glob("*/pyproject.toml"))
DEV_DIRS = ("tests", "benchmarks", "tools", "examples")

# imports of the dev scripts that requirements-dev.txt leaves out on purpose, and why
NOT_IN_DEV = {
    "spawn_ds": "a module tests/data/test_map_loader.py writes at run time",
    "cupy": "GPU only: `tox -e cuda` installs it (packages/kernels-cuda extras)",
}

# import name -> the distributions that provide it, for modules absent from this machine
NOT_INSTALLED = {
    "cupy": {"cupy-cuda12x", "cupy-cuda11x"},
    "cupyx": {"cupy-cuda12x", "cupy-cuda11x"},
    "PIL": {"pillow"},
    "zmq": {"pyzmq"},
}


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _req_name(requirement: str) -> str:
    return _norm(re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement).group(1))


def _project(directory: Path) -> dict:
    return tomllib.loads((directory / "pyproject.toml").read_text())["project"]


def _own_modules() -> dict:
    """Import name -> distribution, for every package of the repository."""
    out = {}
    for d in PACKAGE_DIRS:
        for top in (d / "src").iterdir():
            if (top / "__init__.py").exists():
                out[top.name] = _norm(_project(d)["name"])
    return out


OWN = _own_modules()
STDLIB = set(sys.stdlib_module_names) | {"__future__"}
_DISTS = importlib.metadata.packages_distributions()


def _dists(module: str) -> set:
    if module in OWN:
        return {OWN[module]}
    found = {_norm(d) for d in _DISTS.get(module, ())}
    return found or NOT_INSTALLED.get(module, {_norm(module)})


def _guarded_lines(tree: ast.AST) -> set:
    """Line numbers of imports that may fail without breaking the module's import."""
    lines = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Try, ast.If)):
            for inner in ast.walk(node):
                if isinstance(inner, (ast.Import, ast.ImportFrom)):
                    lines.add(inner.lineno)
    return lines


def _importorskip(node: ast.AST) -> list:
    """``pytest.importorskip("name")``: a test that skips without ``name`` (an optional import)."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "importorskip"
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    ):
        return [node.args[0].value]
    return []


def imports(path: Path) -> Iterator[tuple[str, bool]]:
    """(top-level module, required at import time) for every absolute import of ``path``."""
    tree = ast.parse(path.read_text(), str(path))
    guarded = _guarded_lines(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif _importorskip(node):
            names = _importorskip(node)
            guarded.add(node.lineno)
        else:
            continue
        for name in names:
            top = name.split(".")[0]
            if top not in STDLIB:
                yield top, node.lineno not in guarded


def test_imports_are_read(tmp_path):
    """The scan sees what it must: a top-level import, lazy ones, and no stdlib."""
    src = tmp_path / "m.py"
    src.write_text(
        "import os\nimport zmq.asyncio\nfrom attrs import define\n"
        "try:\n    import xxhash\nexcept ImportError:\n    xxhash = None\n"
        "def f():\n    from PIL import Image\n"
        "torch = pytest.importorskip('torch')\n"
    )
    found = set(imports(src))
    assert found == {
        ("zmq", True),
        ("attrs", True),
        ("xxhash", False),
        ("PIL", False),
        ("torch", False),
    }
    assert _dists("zmq") == {"pyzmq"} and _dists("PIL") == {"pillow"}
    assert _dists("oar_io") == {"oar-io"}


@pytest.mark.parametrize("pkg", PACKAGE_DIRS, ids=lambda d: d.name)
def test_package_imports_are_declared(pkg):
    project = _project(pkg)
    own = _norm(project["name"])
    required = {_req_name(r) for r in project.get("dependencies", [])}
    extras = {
        _req_name(r) for reqs in project.get("optional-dependencies", {}).values() for r in reqs
    }
    missing = set()
    for path in sorted((pkg / "src").rglob("*.py")):
        for module, at_import in imports(path):
            dists = _dists(module) - {own}
            if not dists:
                continue
            allowed = required if at_import else required | extras
            if not dists & allowed:
                kind = "dependencies" if at_import else "dependencies or an extra"
                where = path.relative_to(ROOT)
                missing.add(f"{where}: '{module}' ({'/'.join(sorted(dists))}) not in {kind}")
    assert not missing, f"{project['name']} imports what it does not declare:\n" + "\n".join(
        sorted(missing)
    )


def _local_modules() -> set:
    """Names the dev scripts import from the repository itself (helpers beside the tests)."""
    names = set()
    for d in DEV_DIRS:
        for p in (ROOT / d).rglob("*.py"):
            names.add(p.stem)
            names.update(part for part in p.relative_to(ROOT).parts[:-1])
    return names


def _dev_requirements() -> set:
    names = set()
    for line in (ROOT / "requirements-dev.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line.startswith("-e "):
            project = _project(ROOT / line[3:].strip())
            names.add(_norm(project["name"]))
            names.update(_req_name(r) for r in project.get("dependencies", []))
        elif line:
            names.add(_req_name(line))
    return names


def _is_oracle_script(path: Path) -> bool:
    """Golden-data generators run by Fluid 1.8.5's own interpreter (docs/oracle.md), not by ours."""
    return "fluid18" in path.name


def test_dev_imports_are_in_requirements_dev():
    allowed = _dev_requirements()
    local = _local_modules()
    missing = set()
    for d in DEV_DIRS:
        for path in sorted((ROOT / d).rglob("*.py")):
            if _is_oracle_script(path):
                continue
            for module, _ in imports(path):
                if module in local or module in NOT_IN_DEV:
                    continue
                dists = _dists(module)
                if not dists & allowed:
                    where = path.relative_to(ROOT)
                    missing.add(f"{where}: '{module}' ({'/'.join(sorted(dists))})")
    assert not missing, "not in requirements-dev.txt:\n" + "\n".join(sorted(missing))


def test_every_package_is_in_requirements_dev():
    lines = (ROOT / "requirements-dev.txt").read_text().splitlines()
    listed = {line[3:].strip() for line in lines if line.startswith("-e ")}
    assert listed == {f"packages/{d.name}" for d in PACKAGE_DIRS}
