"""Import order is irrelevant: a fresh process whose first import is a plugin's own module
(``import oar_kernels_cpu.kernels.conv`` before ``oar``) loads every plugin, warns about
nothing, and runs a program. Importing ``oar`` loads the plugins, so a plugin package that
were half-initialised at that moment would fail to register (a circular import)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import pytest

# a package's top level, a kernel family, the plugin entry modules, a module that another
# plugin's registration hook imports from
FIRST_IMPORTS = [
    "oar_kernels_cpu",
    "oar_kernels_cpu.kernels.conv",
    "oar_dist.kernels.tables",
    "oar_kernels_cuda.registration",
    "oar_data.plugin",
    "oar_io.plugin",
    "oar_kernels_numba.plugin",
]

PROBE = """
import {module}
import json, numpy as np
from oar import fluid
from oar.plugins import plugin_infos
main, startup = fluid.Program(), fluid.Program()
with fluid.program_guard(main, startup):
    x = fluid.data("x", [2, 1, 3, 3], "float32")
    y = fluid.layers.conv2d(x, 1, 1, bias_attr=False,
                            param_attr=fluid.initializer.Constant(2.0))
exe = fluid.Executor(fluid.CPUPlace())
exe.run(startup)
(out,) = exe.run(main, feed={{"x": np.ones((2, 1, 3, 3), "float32")}}, fetch_list=[y])
print(json.dumps({{"sum": float(out.sum()),
                  "failed": [[i.name, i.error] for i in plugin_infos()
                             if i.error is not None and i.available]}}))
"""


@pytest.mark.parametrize("module", FIRST_IMPORTS)
def test_a_plugin_module_imported_first_loads_cleanly(module):
    if importlib.util.find_spec(module.split(".")[0]) is None:
        pytest.skip(f"{module.split('.')[0]} is not installed")
    env = {k: v for k, v in os.environ.items() if not k.startswith("OAR_")}
    proc = subprocess.run(
        [sys.executable, "-W", "error", "-c", PROBE.format(module=module)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == "", proc.stderr  # no "failed to load" / circular-import warning
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["failed"] == []
    assert report["sum"] == 36.0  # the cpu kernels are there: 2 * 18 ones
