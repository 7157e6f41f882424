"""Fixtures for the deployment tests: the scenario models saved as inference models."""

from __future__ import annotations

import importlib.util
import os
import sys

import pytest

if importlib.util.find_spec("oar_deploy") is None or importlib.util.find_spec("oar_io") is None:
    collect_ignore_glob = ["test_*.py"]  # an environment without the deploy (or io) plugin

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="session")
def scenario_models(tmp_path_factory):
    """name -> (model dir, feeds(rng, n)) for fit_a_line, the MLP and the MNIST CNN (bn + dropout)."""
    from models import SCENARIOS

    return {name: make(str(tmp_path_factory.mktemp(name))) for name, make in SCENARIOS.items()}
