"""kernels-cpu keeps large freed arrays mapped (glibc's malloc thresholds): a loop that
allocates and frees the same large arrays stops faulting their pages in every time."""

import json
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc only")

SCRIPT = textwrap.dedent(
    """
    import json, resource
    import numpy as np
    from oar import fluid  # loads the plugins: kernels-cpu tunes malloc
    from oar_kernels_cpu import _malloc

    def step():  # a training step's pattern: activations kept until the step ends, then freed
        kept = [np.ones((1 << 20,), np.float32)]
        for _ in range(7):
            kept.append(kept[-1] * 2)
        return float(kept[-1][0])

    for _ in range(5):
        step()
    r0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(20):
        step()
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - r0
    print(json.dumps({"tuned": _malloc._done[0], "faults_per_step": faults / 20}))
    """
)


def _run(env_extra: dict) -> dict:
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith(("MALLOC_", "GLIBC_TUN"))}
    env.update(env_extra)
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120, env=env
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_large_arrays_are_reused_without_page_faults():
    got = _run({})
    if not got["tuned"]:
        pytest.skip("not glibc: malloc left alone")
    # 32 MB of arrays per step: untuned glibc faults most of their 8,000 pages in each step
    assert got["faults_per_step"] < 100, got


def test_opt_out_leaves_malloc_alone():
    got = _run({"OAR_MALLOC_TUNING": "0"})
    assert got["tuned"] is False
    assert got["faults_per_step"] > 1000, got  # the default behaviour the tuning removes
