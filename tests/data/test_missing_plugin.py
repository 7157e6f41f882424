"""Without oar-data, every name it provides says which distribution to install.

Runs in a subprocess with the plugin disabled (OAR_DISABLE_PLUGINS=data), so it
holds whether or not oar-data is installed here.
"""

import os
import subprocess
import sys


def test_missing_plugin_error():
    code = (
        "import oar\nfrom oar import fluid\n"
        "for get in (lambda: fluid.io.PyReader, lambda: oar.batch, lambda: fluid.DataFeeder,\n"
        "            lambda: oar.reader, lambda: fluid.contrib.reader, lambda: fluid.io.DataLoader):\n"
        "    try:\n        get()\n    except ImportError as e:\n        print(type(e).__name__, e)\n"
        "try:\n    import oar.dataset.mnist\nexcept ImportError as e:\n    print(type(e).__name__, e)\n"
    )
    env = dict(os.environ, OAR_DISABLE_PLUGINS="data")
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60
    )
    lines = out.stdout.strip().splitlines()
    assert len(lines) == 7, out.stdout + out.stderr
    assert all(
        line.startswith("MissingPluginError") and "pip install oar-data" in line
        for line in lines[:6]
    )
    assert "fluid.io.PyReader is provided by the oar-data plugin" in lines[0]
    assert "oar-data" in lines[6]
