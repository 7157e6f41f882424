"""Fixtures for the io plugin tests: fresh programs, a fresh scope, a temp working dir."""

from __future__ import annotations

import importlib.util
import os
import sys

import pytest

if importlib.util.find_spec("oar_io") is None:  # an environment without the io plugin
    collect_ignore_glob = ["test_*.py"]
else:
    from oar import fluid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    """New main/startup programs, a new global scope and unique names, cwd = tmp_path."""
    monkeypatch.chdir(tmp_path)
    main, startup = fluid.Program(), fluid.Program()
    with (
        fluid.program_guard(main, startup),
        fluid.scope_guard(fluid.Scope()),
        fluid.unique_name.guard(),
    ):
        yield main, startup
