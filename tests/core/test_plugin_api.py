"""Plugins import core only through the declared plugin API.

Every ``.py`` file of every package under ``packages/`` except core, and of
``examples/``, may import ``oar.api``, ``oar.fluid``, ``oar.errors`` (and their
submodules) and the bare ``oar`` package; anything else from ``oar`` - ``from
oar.x import y``, ``import oar.x``, an import inside a function, or reaching
through ``oar.<internal>`` attributes - fails here.
"""

from __future__ import annotations

import ast
import importlib
import pathlib
import re

import oar
import oar.api
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
ALLOWED = ("oar.api", "oar.fluid", "oar.errors")
# top-level names of `oar` itself that are public (``oar.LoDTensor``, ``oar.batch``...)
ALLOWED_ATTRS = set(oar.__all__) | {"api", "fluid", "errors", "__version__"}


def _plugin_files() -> list[pathlib.Path]:
    roots = [p for p in (ROOT / "packages").iterdir() if p.is_dir() and p.name != "core"]
    roots.append(ROOT / "examples")
    files = []
    for root in roots:
        files += [
            f
            for f in root.rglob("*.py")
            if not {".venv", "build", "node_modules"} & set(f.relative_to(root).parts)
        ]
    return sorted(files)


def _allowed(module: str) -> bool:
    return module == "oar" or any(module == a or module.startswith(a + ".") for a in ALLOWED)


def violations(source: str, filename: str = "<src>") -> list[str]:
    """Every core import (or ``oar.<internal>`` access) in ``source`` outside the plugin API."""
    tree = ast.parse(source, filename)
    bad = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            mod = node.module
            if mod.split(".")[0] != "oar":
                continue
            if mod == "oar":
                bad += [
                    f"{filename}:{node.lineno}: from oar import {a.name}"
                    for a in node.names
                    if a.name not in ALLOWED_ATTRS
                ]
            elif not _allowed(mod):
                bad.append(f"{filename}:{node.lineno}: from {mod} import ...")
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "oar" and not _allowed(a.name):
                    bad.append(f"{filename}:{node.lineno}: import {a.name}")
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "oar"
            and node.attr not in ALLOWED_ATTRS
        ):
            bad.append(f"{filename}:{node.lineno}: oar.{node.attr}")
        elif isinstance(node, ast.Call) and _dynamic_import_of_core(node):
            bad.append(f"{filename}:{node.lineno}: dynamic import of a core module")
    return bad


def _dynamic_import_of_core(call: ast.Call) -> bool:
    """``importlib.import_module("oar.x")`` / ``__import__("oar.x")`` with a literal name."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    if name not in ("import_module", "__import__") or not call.args:
        return False
    arg = call.args[0]
    if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str)):
        return False
    return arg.value.split(".")[0] == "oar" and not _allowed(arg.value)


def test_plugin_packages_and_examples_import_only_the_plugin_api():
    files = _plugin_files()
    assert len(files) > 50, files  # kernels-cpu alone has dozens: the walk found the packages
    bad = []
    for f in files:
        bad += violations(f.read_text(encoding="utf-8"), str(f.relative_to(ROOT)))
    assert not bad, "plugins must import core only via oar.api / oar.fluid / oar.errors:\n" + (
        "\n".join(bad)
    )


@pytest.mark.parametrize(
    "source",
    [
        "from oar.registry import OpDef",
        "import oar.registry",
        "import oar.ops.conv as c",
        "def f():\n    from oar.executor.compiler import merge_feeds\n",
        "class K:\n    def m(self):\n        import oar.plugins\n",
        "from oar import registry",
        "import oar\nx = oar.plugins.registries()",
        "import importlib\nimportlib.import_module('oar.ops.conv')",
    ],
)
def test_the_check_catches_each_kind_of_core_import(source):
    assert violations(source), source


@pytest.mark.parametrize(
    "source",
    [
        "from oar.api import OpDef, hookimpl",
        "from oar import fluid",
        "import oar.fluid.layers as L",
        "from oar.errors import ShapeError",
        "import oar\nt = oar.LoDTensor()",
        "from oar_kernels_cpu.kernels import kernel",
    ],
)
def test_the_check_allows_the_plugin_api(source):
    assert violations(source) == []


def test_every_exported_name_resolves_to_the_core_object():
    for name, module in oar.api._EXPORTS.items():
        core_name = oar.api._RENAMED.get(name, name)
        expected = getattr(importlib.import_module(module), core_name)
        assert getattr(oar.api, name) is expected, name
    assert sorted(oar.api.__all__) == sorted(oar.api._EXPORTS)


def test_an_unknown_name_says_it_is_not_part_of_the_api():
    with pytest.raises(AttributeError, match="not part of the plugin API"):
        oar.api.framework  # noqa: B018


def test_the_type_checking_block_declares_every_export():
    """The names mypy sees (TYPE_CHECKING imports) are exactly the runtime exports."""
    tree = ast.parse((ROOT / "packages/core/src/oar/api.py").read_text())
    declared = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING":
            for imp in node.body:
                assert isinstance(imp, ast.ImportFrom)
                for a in imp.names:
                    declared.add(a.asname or a.name)
                    assert oar.api._EXPORTS[a.asname or a.name] == imp.module, a.name
    assert declared == set(oar.api._EXPORTS)


def test_docs_describe_every_exported_name():
    doc = (ROOT / "docs/kernel-plugins.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"^\| `([A-Za-z_][A-Za-z_0-9]*)`", doc, flags=re.M))
    assert documented == set(oar.api.__all__), (
        f"undocumented: {sorted(set(oar.api.__all__) - documented)}; "
        f"documented but not exported: {sorted(documented - set(oar.api.__all__))}"
    )
