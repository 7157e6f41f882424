"""The plugin's life cycle: unavailable without a usable numba, lazy, equal results on a model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

pytest.importorskip("oar_kernels_numba")
from oar_kernels_numba.compat import _satisfies, unavailable_reason

TIMEOUT = 120


def _run(code: str, env_extra: dict, tmp_path=None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OAR_")}
    env.update(env_extra)
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env=env,
        cwd=tmp_path,
    )


def _fake_numba(root, requires: str, body: str):
    """A ``numba`` package (and its dist-info) that shadows the real one on PYTHONPATH."""
    (root / "numba").mkdir()
    (root / "numba" / "__init__.py").write_text(body)
    info = root / "numba-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: numba\nVersion: 0.1\nRequires-Python: >=3.9\n"
        f"Requires-Dist: {requires}\n"
    )
    return {"PYTHONPATH": str(root)}


PROGRAM = """
    import json
    import numpy as np
    from oar import fluid
    from oar.cli import plugins_report
    from oar.api import registries

    report = plugins_report()
    info = next(p for p in report["plugins"] if p["name"] == "kernels_numba")
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        x = fluid.data("x", [None, 4], "float32")
        loss = fluid.layers.mean(fluid.layers.relu(fluid.layers.fc(x, 3)))
        fluid.optimizer.Adam(0.1).minimize(loss)
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(start)
    out = exe.run(main, feed={"x": np.ones((2, 4), "float32")}, fetch_list=[loss])[0]
    winner = registries().kernels.lookup("adam", "cpu", "float32").plugin
    print(json.dumps({"info": info, "winner": winner, "loss": float(out)}))
"""


def test_unsupported_numpy_reported_unavailable(tmp_path):
    env = _fake_numba(tmp_path, "numpy<1.0,>=0.5", "raise ImportError('must not be imported')")
    res = _run(PROGRAM, env, tmp_path)
    assert res.returncode == 0, res.stderr
    got = json.loads(res.stdout.strip().splitlines()[-1])
    assert got["info"]["available"] is False
    assert "does not support NumPy" in got["info"]["error"]
    assert got["winner"] == "kernels_cpu"


def test_numba_failing_to_import_leaves_the_numpy_kernels(tmp_path):
    env = _fake_numba(tmp_path, "numpy>=1.0", "raise ImportError('broken numba install')")
    res = _run(PROGRAM, env, tmp_path)
    assert res.returncode == 0, res.stderr
    got = json.loads(res.stdout.strip().splitlines()[-1])
    assert got["info"]["available"] is True and got["winner"] == "kernels_cpu"
    assert "broken numba install" in res.stderr  # logged once, the program still ran


def test_cli_lists_unavailable(tmp_path):
    env = _fake_numba(tmp_path, "numpy<1.0", "")
    res = _run("from oar.cli import main; main(['plugins'])", env, tmp_path)
    assert res.returncode == 0, res.stderr
    line = next(ln for ln in res.stdout.splitlines() if "kernels_numba" in ln)
    assert "UNAVAILABLE" in line and "NumPy" in line


def test_version_rules():
    assert _satisfies("2.4.6", ">=1.24,<2.5")
    assert not _satisfies("2.4.6", ">=1.24,<2.4")
    assert _satisfies("3.11.7", ">=3.10")
    assert not _satisfies("1.23.5", ">=1.24")


SCENARIO = """
    import json
    import numpy as np
    from oar import fluid

    rng = np.random.default_rng(0)
    data = rng.standard_normal((64, 80)).astype("float32")  # above the numba kernels' SMALL
    label = rng.integers(0, 5, (64, 1)).astype("int64")
    words = rng.integers(0, 30, (40, 1)).astype("int64")
    losses = {}
    for name, make in [
        ("sgd", lambda: fluid.optimizer.SGD(0.1)),
        ("momentum", lambda: fluid.optimizer.Momentum(0.05, 0.9, use_nesterov=True)),
        ("adam", lambda: fluid.optimizer.Adam(0.01)),
    ]:
        main, start = fluid.Program(), fluid.Program()
        main.random_seed = start.random_seed = 1
        with fluid.program_guard(main, start):
            x = fluid.data("x", [None, 80], "float32")
            y = fluid.data("y", [None, 1], "int64")
            w = fluid.data("w", [None, 1], "int64", lod_level=1)
            emb = fluid.layers.embedding(w, size=[30, 8], is_sparse=name != "sgd")
            pooled = fluid.layers.sequence_pool(emb, "sum")
            h = fluid.layers.fc(x, 128, act="relu")
            h = fluid.layers.fc(h, 64, act="relu")
            pred = fluid.layers.fc(h, 5, act="softmax")
            loss = fluid.layers.mean(fluid.layers.cross_entropy(pred, y))
            loss = loss + fluid.layers.reduce_mean(pooled)
            make().minimize(loss)
        exe = fluid.Executor(fluid.CPUPlace())
        scope = fluid.Scope()
        exe.run(start, scope=scope)
        t = fluid.create_lod_tensor(words, [[10, 10, 20]], fluid.CPUPlace())
        out = []
        for _ in range(5):
            out.append(float(exe.run(main, feed={"x": data, "y": label, "w": t},
                                     fetch_list=[loss], scope=scope)[0]))
        losses[name] = out
    print(json.dumps(losses))
"""


def test_same_losses_with_and_without_the_plugin():
    if unavailable_reason() is not None:
        pytest.skip(unavailable_reason())
    runs = {}
    for label, extra in (("with", {}), ("without", {"OAR_DISABLE_PLUGINS": "kernels_numba"})):
        res = _run(SCENARIO, extra)
        assert res.returncode == 0, res.stderr
        runs[label] = json.loads(res.stdout.strip().splitlines()[-1])
    for opt, losses in runs["with"].items():
        np.testing.assert_allclose(losses, runs["without"][opt], rtol=1e-5, err_msg=opt)


def test_import_oar_does_not_import_numba():
    """numba (0.3-0.4 s to import) loads only when a program first uses a covered op family."""
    code = """
        import sys
        from oar.api import registries
        from oar.cli import plugins_report
        reg = registries()
        plugins_report()  # lists every kernel: loads every family, the numba ones too
        print("after report:", "numba" in sys.modules)
    """
    first = _run(
        "import sys\nfrom oar.api import registries\nregistries()\n"
        "print('after import:', 'numba' in sys.modules)",
        {},
    )
    assert first.returncode == 0, first.stderr
    assert "after import: False" in first.stdout
    res = _run(code, {})
    assert res.returncode == 0, res.stderr
    if unavailable_reason() is None:
        assert "after report: True" in res.stdout
