"""Without oar-dist, the launcher and the dygraph parallel names say what to install.

Runs in subprocesses with the plugin disabled (OAR_DISABLE_PLUGINS=dist), so it
holds whether or not oar-dist is installed here.
"""

import os
import subprocess
import sys


def test_launch_without_oar_dist_names_the_pip_command(tmp_path):
    env = dict(os.environ, OAR_DISABLE_PLUGINS="dist")
    script = tmp_path / "train.py"
    script.write_text("print('never runs')\n")
    proc = subprocess.run(
        [sys.executable, "-m", "oar.distributed.launch", "--nproc_per_node", "2", str(script)],
        capture_output=True, text=True, env=env, timeout=60,
    )  # fmt: skip
    assert proc.returncode != 0
    assert "MissingPluginError" in proc.stderr
    assert "distributed.launch is provided by the oar-dist plugin" in proc.stderr
    assert "pip install oar-dist" in proc.stderr
    assert "never runs" not in proc.stdout


def test_dygraph_parallel_names_without_oar_dist():
    code = (
        "from oar import fluid\n"
        "for get in (lambda: fluid.dygraph.DataParallel, lambda: fluid.dygraph.ParallelEnv,\n"
        "            lambda: fluid.dygraph.prepare_context, lambda: fluid.dygraph.parallel):\n"
        "    try:\n        get()\n    except ImportError as e:\n        print(type(e).__name__, e)\n"
    )
    env = dict(os.environ, OAR_DISABLE_PLUGINS="dist")
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60
    )
    lines = out.stdout.strip().splitlines()
    assert len(lines) == 4, out.stdout + out.stderr
    assert all(
        line.startswith("MissingPluginError") and "pip install oar-dist" in line for line in lines
    )
