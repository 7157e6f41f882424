"""Project habits that hold for every package: one version source, a 600-line module budget,
type information shipped."""

from __future__ import annotations

import importlib
import importlib.metadata
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# distribution -> import package (every directory under packages/)
PACKAGES = {
    "oar-core": "oar",
    "oar-kernels-cpu": "oar_kernels_cpu",
    "oar-kernels-cuda": "oar_kernels_cuda",
    "oar-kernels-numba": "oar_kernels_numba",
    "oar-data": "oar_data",
    "oar-dist": "oar_dist",
    "oar-io": "oar_io",
    "oar-deploy": "oar_deploy",
}

BUDGET = 600  # lines per module (STYLE.md: modules under ~600 lines, each with one job)

# Modules allowed over the budget, each with a ceiling (so it cannot keep growing) and why.
# An entry that fits the budget again is an error: remove it.
OVER_BUDGET = {
    "packages/core/src/oar/dygraph/nn.py": (
        760,
        "Fluid 1.8's dygraph nn Layer classes; being reworked onto the shared per-family "
        "normalisers, then split by family like layers/",
    ),
    "tools/probe_bad_input.py": (
        1100,
        "a developer tool whose bulk is the table of ~470 bad-input cases, one per line; "
        "not imported by any package",
    ),
}


def _pyproject(directory: Path) -> str:
    return (directory / "pyproject.toml").read_text()


def test_every_package_is_listed():
    dirs = sorted(p.parent.name for p in (ROOT / "packages").glob("*/pyproject.toml"))
    names = sorted(
        re.search(r'^name = "([^"]+)"', _pyproject(ROOT / "packages" / d), re.M).group(1)
        for d in dirs
    )
    assert names == sorted(PACKAGES)


@pytest.mark.parametrize("dist", sorted(PACKAGES))
def test_one_version_source_per_package(dist):
    """The version lives in the package's ``__version__`` only; the metadata is built from it."""
    module = PACKAGES[dist]
    directory = next(
        p.parent
        for p in (ROOT / "packages").glob("*/pyproject.toml")
        if f'name = "{dist}"' in p.read_text()
    )
    text = _pyproject(directory)
    assert 'dynamic = ["version"]' in text and not re.search(r"^version\s*=", text, re.M)
    assert f'[tool.hatch.version]\npath = "src/{module}/__init__.py"' in text
    try:
        mod = importlib.import_module(module)
        installed = importlib.metadata.version(dist)
    except (ImportError, importlib.metadata.PackageNotFoundError):
        pytest.skip(f"{dist} is not installed here")
    # a mismatch means the installed metadata is stale: reinstall the package
    assert installed == mod.__version__, (dist, installed, mod.__version__)
    assert (directory / "src" / module / "py.typed").is_file()  # PEP 561: types are shipped


def test_oar_plugins_reports_the_packages_versions():
    from oar.cli import plugins_report

    for p in plugins_report()["plugins"]:
        module = PACKAGES.get(p["distribution"])
        if module is not None and not p["error"]:
            assert p["version"] == importlib.import_module(module).__version__, p


def _modules() -> list:
    out = []
    for top in ("packages", "tests", "benchmarks", "examples", "tools"):
        for path in sorted((ROOT / top).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if "/." in "/" + rel or "/build/" in rel:  # virtual environments, build output
                continue
            out.append((rel, sum(1 for _ in path.open(encoding="utf-8"))))
    return out


def test_module_budget():
    """No module over 600 lines but the named exceptions, each under its ceiling."""
    lines = dict(_modules())
    over = {
        rel: n
        for rel, n in lines.items()
        if n > BUDGET and not (rel in OVER_BUDGET and n <= OVER_BUDGET[rel][0])
    }
    assert not over, (
        f"modules over the {BUDGET}-line budget (split them by job, or name them in "
        f"OVER_BUDGET with a reason): {over}"
    )
    stale = [rel for rel in OVER_BUDGET if lines.get(rel, 0) <= BUDGET]
    assert not stale, f"back under the budget (or gone): remove from OVER_BUDGET: {stale}"


def test_license_ships_with_every_package():
    """Apache-2.0 is declared, so the text is in the repository and in every wheel and sdist."""
    text = (ROOT / "LICENSE").read_text()
    assert "Apache License" in text and "Version 2.0" in text
    for directory in (ROOT / "packages").glob("*/pyproject.toml"):
        assert (directory.parent / "LICENSE").read_text() == text, directory.parent
        assert 'license-files = ["LICENSE"]' in _pyproject(directory.parent), directory.parent


def test_dev_requirements_install_every_package():
    """`pip install -r requirements-dev.txt` (the README's development set-up) covers every package."""
    lines = (ROOT / "requirements-dev.txt").read_text().splitlines()
    editable = {line.split()[-1] for line in lines if line.startswith("-e ")}
    dirs = {f"packages/{p.parent.name}" for p in (ROOT / "packages").glob("*/pyproject.toml")}
    assert editable == dirs, f"add `-e <dir>` lines to requirements-dev.txt for: {dirs - editable}"


def test_no_tracked_file_points_outside_the_repository():
    """Docs, tests and tools work from any checkout: no machine-specific absolute paths (the
    Fluid oracle is found through FLUID18_PYTHON, docs/oracle.md) and no sibling folders."""
    import subprocess

    files = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    bad = []
    for name in files:
        if not name.endswith((".py", ".md", ".toml", ".ini", ".txt", ".cfg")) or name.endswith(
            "test_project.py"
        ):
            continue
        text = (ROOT / name).read_text(errors="replace")
        for pattern in (r"(?<![\w.])/work/", r"\.\./shared/"):  # ./work/ is the seeds' own folder
            if re.search(pattern, text):
                bad.append(f"{name}: {pattern}")
    assert not bad, bad
