"""Atomic saves: a save that dies half-way leaves the previous checkpoint whole and loadable."""

from __future__ import annotations

import glob
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from iotest_util import HERE
from oar import fluid
from oar_io import tensor_formats

CHILD = r"""
import sys, numpy as np
from oar import fluid
main = fluid.Program()
blk = main.global_block()
vs = [blk.create_var(name="w%02d" % i, shape=[1 << 18], dtype="float64", persistable=True) for i in range(24)]
def fill(k):
    for i, v in enumerate(vs):
        fluid.global_scope().var(v.name).get_tensor().set(np.full(1 << 18, k * 100 + i, "float64"), None)
fill(1)
fluid.io.save_persistables(None, "ckpt", main)
fluid.save_dygraph({v.name: np.array(fluid.global_scope().find_var(v.name).get_tensor()) for v in vs}, "dy")
print("v1", flush=True)
sys.stdin.readline()
fill(2)
if sys.argv[1] == "dir":
    fluid.io.save_persistables(None, "ckpt", main)
else:
    fluid.save_dygraph({v.name: np.array(fluid.global_scope().find_var(v.name).get_tensor()) for v in vs}, "dy")
print("v2", flush=True)
"""


def _expect_v1(tmp_path):
    main = fluid.Program()
    vs = [
        main.global_block().create_var(
            name=f"w{i:02d}", shape=[1 << 18], dtype="float64", persistable=True
        )
        for i in range(24)
    ]
    with fluid.scope_guard(fluid.Scope()):
        fluid.io.load_persistables(None, str(tmp_path / "ckpt"), main)
        for i, v in enumerate(vs):
            a = np.array(fluid.global_scope().find_var(v.name).get_tensor())
            assert a[0] == a[-1] == 100 + i
    params, opt = fluid.load_dygraph(str(tmp_path / "dy"))
    assert params is None and all(opt[f"w{i:02d}"][-1] == 100 + i for i in range(24))


@pytest.mark.parametrize("target", ["dir", "file"])
def test_sigkill_during_save_leaves_previous_checkpoint(tmp_path, target):
    env = dict(os.environ, PYTHONPATH=HERE + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.Popen(
        [sys.executable, "-c", CHILD, target],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert p.stdout.readline().strip() == "v1"
        pattern = str(
            tmp_path / (".ckpt.*.oar-staging/*" if target == "dir" else ".dy.*.pdopt.oar-part")
        )
        p.stdin.write("go\n")
        p.stdin.flush()
        deadline = time.time() + 30
        while time.time() < deadline:
            found = glob.glob(pattern)
            if found and (
                target == "file" and os.path.getsize(found[0]) > 1 << 20 or len(found) >= 3
            ):
                break
            time.sleep(0.002)
        else:
            pytest.fail("the second save never started")
        os.kill(p.pid, signal.SIGKILL)
        p.wait(timeout=10)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == -signal.SIGKILL
    _expect_v1(tmp_path)


def test_failed_save_leaves_previous_checkpoint_and_no_debris(fresh, monkeypatch):
    main, _ = fresh
    vs = [
        main.global_block().create_var(name=f"v{i}", shape=[4], dtype="float32", persistable=True)
        for i in range(5)
    ]
    for i, v in enumerate(vs):
        fluid.global_scope().var(v.name).get_tensor().set(np.full(4, i, "float32"), None)
    fluid.io.save_persistables(None, "ck", main)
    calls = {"n": 0}
    real = tensor_formats.OarTensorFormat.write

    def flaky(self, f, name, array, lod=None):
        calls["n"] += 1
        if calls["n"] == 3:
            raise OSError(28, "No space left on device")
        return real(self, f, name, array * 10, lod)

    with monkeypatch.context() as m:
        m.setattr(tensor_formats.OarTensorFormat, "write", flaky)
        with pytest.raises(OSError, match="No space"):
            fluid.io.save_persistables(None, "ck", main)
    assert sorted(os.listdir(".")) == ["ck"]
    with fluid.scope_guard(fluid.Scope()):
        fluid.io.load_persistables(None, "ck", main)
        for i, v in enumerate(vs):
            assert np.array(fluid.global_scope().find_var(v.name).get_tensor())[0] == i


def test_debris_of_dead_saves_is_cleaned(fresh):
    main, _ = fresh
    main.global_block().create_var(name="v", shape=[2], dtype="float32", persistable=True)
    fluid.global_scope().var("v").get_tensor().set(np.ones(2, "float32"), None)
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    ).stdout.strip()
    os.makedirs(f".ck.{dead}-abc.oar-staging")
    open(f".m.pdopt.{dead}-x.oar-tmp", "wb").close()
    live = (
        f".ck.{os.getpid()}-zzz.oar-staging"  # a save in progress in a live process is left alone
    )
    os.makedirs(live)
    fluid.io.save_persistables(None, "ck", main)
    fluid.save_dygraph({"v": np.ones(2)}, "m")
    assert sorted(os.listdir(".")) == sorted([live, "ck", "m.pdopt", "m.pdsave"])


def test_interrupted_fallback_swap_is_recovered(fresh):
    """If a save died between the two renames of the fallback swap, the next save restores the old copy."""
    main, _ = fresh
    main.global_block().create_var(name="v", shape=[2], dtype="float32", persistable=True)
    fluid.global_scope().var("v").get_tensor().set(np.ones(2, "float32"), None)
    fluid.io.save_persistables(None, "ck", main)
    os.rename("ck", "ck.oar-old")
    with pytest.raises(ValueError, match="ck.oar-old"):
        fluid.io.load_persistables(None, "ck", main)
    w = main.global_block().create_var(name="w", shape=[1], dtype="float32", persistable=True)
    fluid.global_scope().var("w").get_tensor().set(np.ones(1, "float32"), None)
    fluid.io.save_vars(None, "ck", main, vars=[w])
    assert sorted(os.listdir("ck")) == [".oar-manifest.json", "v", "w"]


def test_no_staging_copy_survives_a_normal_exit(tmp_path):
    """The background removal of the replaced checkpoint is joined before the interpreter exits."""
    code = r"""
import numpy as np
from oar import fluid
main = fluid.Program()
vs = [main.global_block().create_var(name="w%02d" % i, shape=[1 << 16], dtype="float64",
      persistable=True) for i in range(32)]
for k in range(3):
    for v in vs:
        fluid.global_scope().var(v.name).get_tensor().set(np.full(1 << 16, k, "float64"), None)
    fluid.io.save_persistables(None, "ckpt", main)
"""
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert sorted(os.listdir(tmp_path)) == ["ckpt"]
