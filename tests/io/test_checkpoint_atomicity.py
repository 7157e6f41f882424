"""Whole-checkpoint atomicity: SIGKILLed saves and racing readers see one save, never a mix.

``ckpt_child.py`` forks savers and kills them at random instants (one import for
all trials keeps this fast); every load afterwards must return exactly the last
finished save or the one being written. A reader loading in a loop while another
process saves must never see values of two saves.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import numpy as np
import pytest
from iotest_util import HERE
from oar import fluid

CHILD = os.path.join(HERE, "ckpt_child.py")
KILLS = int(os.environ.get("OAR_IO_KILLS", "30"))


def _env() -> dict:
    return dict(os.environ, PYTHONPATH=HERE + os.pathsep + os.environ.get("PYTHONPATH", ""))


@pytest.mark.parametrize("mode", ["prefix", "dir", "combined"])
def test_sigkill_at_random_points_leaves_one_whole_checkpoint(tmp_path, mode):
    out = subprocess.run(
        [sys.executable, CHILD, "kill", mode, str(KILLS), "7"],
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    assert len(rows) == KILLS
    bad = [r for r in rows if r["found"] not in ([r["finished"]], [r["writing"]])]
    assert not bad, bad[:5]
    # the kills must have landed inside saves, not only between them
    assert sum(r["mid_save"] for r in rows) + sum(r["found"] == [r["writing"]] for r in rows) > 0


def _load_values(mode: str, main) -> list:
    sys.path.insert(0, HERE)
    import ckpt_child

    return ckpt_child.load(mode, main)


@pytest.mark.parametrize("mode", ["prefix", "dir"])
def test_reader_racing_a_writer_never_sees_a_mix(tmp_path, monkeypatch, mode):
    import ckpt_child  # conftest puts tests/io on sys.path

    monkeypatch.chdir(tmp_path)
    writer = subprocess.Popen(
        [sys.executable, CHILD, "write", mode, "6"],
        cwd=tmp_path,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert writer.stdout.readline().strip() == "1"  # the first save exists
        main = ckpt_child.build()
        loads, seen = 0, set()
        deadline = time.monotonic() + 8
        while writer.poll() is None and time.monotonic() < deadline:
            found = ckpt_child.load(mode, main)
            assert len(found) == 1, f"load {loads} mixed saves {found}"
            seen.add(found[0])
            loads += 1
        rest, err = writer.communicate(timeout=30)
    finally:
        if writer.poll() is None:
            writer.kill()
            writer.wait(timeout=10)
    assert writer.returncode == 0, err[-3000:]
    saves = 1 + len(rest.split())
    print(f"{mode}: {loads} loads during {saves} saves, {len(seen)} distinct saves seen")
    assert loads >= 10 and len(seen) >= 3  # the reader really overlapped many saves


def test_fluid_layout_gets_checksums_from_the_manifest(fresh):
    """A flipped data byte in a Fluid-layout file (no checksum of its own) is caught."""
    main, _ = fresh
    v = main.global_block().create_var(name="w", shape=[64], dtype="float32", persistable=True)
    fluid.global_scope().var("w").get_tensor().set(np.arange(64, dtype="float32"), None)
    fluid.io.save_vars(None, "d", main, vars=[v], format="fluid")
    data = bytearray(open("d/w", "rb").read())
    data[-5] ^= 0x10
    open("d/w", "wb").write(bytes(data))
    from oar_io.errors import CorruptFileError

    with pytest.raises(CorruptFileError, match=r"d/w.*variable 'w'.*does not match the checkpoint"):
        fluid.io.load_vars(None, "d", main, vars=[v])
    os.unlink("d/.oar-manifest.json")  # as Fluid wrote it: no manifest, loads (unchecked)
    fluid.io.load_vars(None, "d", main, vars=[v])


def test_fluid_save_without_optimizer_state_drops_the_stale_pdopt(fresh):
    main, _ = fresh
    blk = main.global_block()
    blk.create_parameter(name="p", shape=[2], dtype="float32")
    m = blk.create_var(name="m", shape=[2], dtype="float32", persistable=True)
    for n in ("p", "m"):
        fluid.global_scope().var(n).get_tensor().set(np.ones(2, "float32"), None)
    fluid.save(main, "ck/model")
    assert os.path.exists("ck/model.pdopt")
    blk._remove_var("m") if hasattr(blk, "_remove_var") else blk.vars.pop(m.name)
    fluid.save(main, "ck/model")
    assert sorted(os.listdir("ck")) == ["model.pdmodel", "model.pdparams", "model.pdsave"]
    params, opt = fluid.load_dygraph("ck/model")
    assert opt is None and list(params) == ["p"]


def test_save_dygraph_keeps_the_other_part_in_the_checkpoint(tmp_path):
    base = str(tmp_path / "m")
    fluid.save_dygraph({"a": np.ones(3, "float32")}, base)  # optimizer-like: .pdopt
    manifest = json.loads(open(base + ".pdsave").read())
    assert list(manifest["files"]) == [".pdopt"]
    with fluid.dygraph.guard():
        lin = fluid.dygraph.Linear(2, 2)
        fluid.save_dygraph(lin.state_dict(), base)
    manifest = json.loads(open(base + ".pdsave").read())
    assert sorted(manifest["files"]) == [".pdopt", ".pdparams"]
    params, opt = fluid.load_dygraph(base)
    assert set(opt) == {"a"} and len(params) == 2


def test_a_save_killed_after_its_manifest_is_rolled_forward(tmp_path):
    """Parts renamed only half-way: the load reads the rest from the part files; the next save finishes them."""
    from oar_io import atomic

    base = str(tmp_path / "m")
    fluid.save_dygraph({"a": np.ones(3, "float32")}, base)
    real = os.replace
    calls = []

    def dying_replace(src, dst):
        if src.endswith(".oar-part"):
            calls.append(dst)
            raise KeyboardInterrupt  # the process "dies" right after the commit point
        return real(src, dst)

    os.replace = dying_replace
    try:
        with pytest.raises(KeyboardInterrupt):
            with atomic.PrefixTransaction(base, replace_all=False) as tx, tx.open(".pdopt") as f:
                from oar_io import container

                container.write_dict(f, {"a": np.full(3, 2, "float32")})
    finally:
        os.replace = real
    assert calls == [base + ".pdopt"]
    assert fluid.load_dygraph(base)[1]["a"][0] == 2  # the committed save, from its part file
    fluid.save_dygraph({"b": np.ones(1, "float32")}, str(tmp_path / "other"))
    atomic.roll_forward(base)
    assert not [e for e in os.listdir(tmp_path) if e.endswith(".oar-part")]
    assert fluid.load_dygraph(base)[1]["a"][0] == 2
