"""The op conformance suite of every op family oar-kernels-numba covers, with its compiled
kernels taking every size (``OAR_NUMBA_SMALL=0``).

The suite's shapes are small, and arrays under ``SMALL`` elements normally go back to
the numpy kernels (a compiled call's dispatch costs more there); this run makes the
compiled kernels answer them too, numeric gradient checks included. Slow (a second run
of those suites, in a subprocess): CI only.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("oar_kernels_numba")
from oar_kernels_numba.compat import unavailable_reason

if unavailable_reason() is not None:
    pytest.skip(f"numba unavailable: {unavailable_reason()}", allow_module_level=True)

SUITE = Path(__file__).resolve().parents[1] / "kernels_cpu"
FAMILIES = [
    "activation",
    "activation_parametric",
    "softmax",
    "losses",
    "losses_cross_entropy",
    "dropout",
    "norm",
    "optimizer_updates",
    "optimizer",
    "sequence_pool",
    "embedding",
    "pool",
    "conv",
]


@pytest.mark.slow
def test_op_suite_with_the_compiled_kernels_at_every_size():
    env = dict(os.environ, OAR_NUMBA_SMALL="0")
    env.pop("OAR_DISABLE_PLUGINS", None)
    files = [str(SUITE / f"test_{f}.py") for f in FAMILIES]
    res = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *files],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]
