"""The third-party plugin example installs into a fresh environment and its kernel is used.

Offline recipe: build wheels of oar-core, oar-kernels-cpu and
examples/oar-example-kernel with this interpreter (hatchling must be importable
here: ``--no-build-isolation``), create an empty venv, install the wheels into
it with ``pip --python``, and make the runtime dependencies (numpy, attrs,
pluggy) visible through a ``.pth`` file pointing at the dirs they come from.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = [
    ROOT / "packages" / "core",
    ROOT / "packages" / "kernels-cpu",
    ROOT / "examples" / "oar-example-kernel",
]

SCRIPT = """
import numpy as np
from oar import fluid
import oar_example_kernel
from oar.plugins import registries

x = fluid.layers.data("x", shape=[3], dtype="float32")
y = fluid.layers.relu(x)
exe = fluid.Executor(fluid.CPUPlace())
for _ in range(3):
    out, = exe.run(feed={"x": np.array([[-1, 0, 2]], "float32")}, fetch_list=[y])
entry = registries().kernels.lookup("relu", "cpu", "float32")
print(oar_example_kernel.CALLS["relu"], out.tolist(), entry.plugin, entry.priority, oar_example_kernel.__file__)
"""


def _dep_dirs() -> list:
    dirs = []
    for mod in ("numpy", "attrs", "pluggy"):
        spec = importlib.util.find_spec(mod)
        d = str(Path(spec.origin).parent.parent)
        if d not in dirs:
            dirs.append(d)
    return dirs


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    if importlib.util.find_spec("hatchling") is None:
        pytest.fail(
            "building the wheels offline needs hatchling importable by the test interpreter "
            "(pip install hatchling)"
        )
    tmp = tmp_path_factory.mktemp("example_plugin")
    wheels = tmp / "wheels"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "-w",
            str(wheels),
            *map(str, PACKAGES),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    target = tmp / "venv"
    venv.create(target, with_pip=False)
    py = target / "bin" / "python"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(py),
            "install",
            "-q",
            "--no-deps",
            "--no-index",
            *map(str, sorted(wheels.glob("*.whl"))),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    site = subprocess.run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    Path(site, "_oar_test_deps.pth").write_text("\n".join(_dep_dirs()) + "\n")
    clean = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "OAR_DISABLE_PLUGINS", "OAR_DISABLE_PLUGIN_AUTOLOAD")
    }
    return target, site, clean


def test_example_plugin_kernel_is_used(env):
    target, site, clean = env
    r = subprocess.run(
        [str(target / "bin" / "python"), "-c", SCRIPT],
        capture_output=True,
        text=True,
        env=clean,
        timeout=60,
        cwd=target,
    )
    assert r.returncode == 0, r.stderr
    calls, out0, out1, out2, plugin, priority, path = r.stdout.split()
    assert calls == "3"  # one call per run: the built-in relu was not used
    assert [out0, out1, out2] == ["[[0.0,", "0.0,", "2.0]]"]
    assert (plugin, priority) == ("example_kernel", "100")
    assert path.startswith(site)  # the installed copy, not the source tree


def test_oar_plugins_lists_the_example(env):
    target, _, clean = env
    r = subprocess.run(
        [str(target / "bin" / "oar"), "plugins"],
        capture_output=True,
        text=True,
        env=clean,
        timeout=60,
        cwd=target,
    )
    assert r.returncode == 0, r.stderr
    assert any(
        line.split()[:3] == ["example_kernel", "oar-example-kernel", "0.1.0"]
        for line in r.stdout.splitlines()
    )
    r = subprocess.run(
        [str(target / "bin" / "python"), "-m", "oar", "plugins", "--json"],
        capture_output=True,
        text=True,
        env=clean,
        timeout=60,
        cwd=target,
    )
    report = json.loads(r.stdout)
    example = [p for p in report["plugins"] if p["distribution"] == "oar-example-kernel"]
    assert example and example[0]["error"] is None


def test_disabling_the_example_restores_the_builtin_kernel(env):
    target, _, clean = env
    r = subprocess.run(
        [str(target / "bin" / "python"), "-c", SCRIPT],
        capture_output=True,
        text=True,
        env={**clean, "OAR_DISABLE_PLUGINS": "oar-example-kernel"},
        timeout=60,
        cwd=target,
    )
    assert r.returncode == 0, r.stderr
    calls, *_, plugin, priority, _path = r.stdout.split()
    # the kernel the example overrode wins again: the numpy one, or oar-kernels-numba's where
    # that plugin is installed and usable (it overrides the numpy relu at priority 50)
    assert calls == "0" and (plugin, priority) in {("kernels_cpu", "0"), ("kernels_numba", "50")}
