"""Golden-data tests: a generator script's program, run here, against its checked-in numbers.

A generator script (``tests/.../data/fluid18_<name>.py``) holds a ``build(fluid)`` that
returns ``(main, startup, feed, fetch_list)`` and works with Fluid 1.8.5 and with oar alike,
and ``NAMES`` naming the fetches; run under Fluid 1.8.5 it writes ``fluid18_<name>.npz``
(each name, and ``<name>_lod`` where LoDs are recorded). A test then needs three lines::

    golden = load_golden(DATA / "fluid18_detection_rpn.py")
    results = run_golden(golden.build, DATA / "fluid18_detection_rpn.npz")
    assert_golden(results, golden.NAMES, "rois", rtol=1e-5, atol=1e-4, lod=True)
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

__all__ = ["load_golden", "run_golden", "assert_golden"]


def load_golden(path: str | Path) -> ModuleType:
    """The generator script at ``path``, imported as a module; while it loads, its folder is
    importable (as when it runs as a script), for the helpers generators share."""
    path = Path(path)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"load_golden: cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    folder = str(path.parent)
    sys.path.insert(0, folder)
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(folder)
    return module


def run_golden(build: Callable, npz: str | Path, setup: Callable | None = None) -> tuple[list, Any]:
    """Build with oar's ``fluid``, run startup (then ``setup(fluid, main, scope)``) and main
    once in a fresh scope; returns ``(fetched LoDTensors, the expected .npz)``."""
    from oar import fluid

    with fluid.unique_name.guard():
        main, startup, feed, outs = build(fluid)
    exe, scope = fluid.Executor(fluid.CPUPlace()), fluid.Scope()
    exe.run(startup, scope=scope)
    if setup is not None:
        setup(fluid, main, scope)
    got = exe.run(main, feed=feed, fetch_list=outs, scope=scope, return_numpy=False)
    return got, np.load(npz)


def assert_golden(
    results: tuple, names: Sequence[str], name: str, rtol: float, atol: float, lod: bool = False
) -> None:
    """The fetch called ``name`` equals the golden array: shape, dtype, values and (with
    ``lod``) its last LoD level. Fluid fetches an empty result as a shapeless float64
    tensor, so an empty golden array only needs an empty result."""
    got, expected = results
    t = got[list(names).index(name)]
    g, e = np.array(t), expected[name]
    if e.size == 0:
        assert g.size == 0, f"{name}: expected an empty result, got shape {g.shape}"
    else:
        assert g.shape == e.shape, f"{name}: shape {g.shape}, expected {e.shape}"
        assert g.dtype == e.dtype, f"{name}: dtype {g.dtype}, expected {e.dtype}"
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol, err_msg=name)
    if lod:
        levels = t.lod() if hasattr(t, "lod") else []
        got_lod = list(levels[-1]) if levels else []
        assert got_lod == list(expected[name + "_lod"]), f"{name}: LoD {got_lod}"
