"""mypy on the typed seams (registry, hookspecs, plugin manager, plugin API, oar-io).

The files are listed in pyproject's ``[tool.mypy]``; ``.ci/run`` runs mypy too.
Here it keeps the land check honest where mypy is installed.
"""

from __future__ import annotations

import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_mypy_passes_on_the_plugin_seams():
    pytest.importorskip("mypy")
    r = subprocess.run(
        [sys.executable, "-m", "mypy"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout + r.stderr
