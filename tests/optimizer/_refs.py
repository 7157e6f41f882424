"""Loads the numpy update references of tests/kernels_cpu/test_optimizer_updates.py (one copy of each formula)."""

import importlib.util
from pathlib import Path

_path = Path(__file__).resolve().parents[1] / "kernels_cpu" / "test_optimizer_updates.py"
_spec = importlib.util.spec_from_file_location("_oar_optimizer_update_refs", _path)
_mod = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_mod)
REFS = _mod.REFS
