"""The ``oar`` command line: --version, plugins --kernel, piping, disabled plugins, core alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from oar import plugins
from oar.cli import kernel_report, main
from oar.hookspecs import hookimpl


def _oar(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("OAR_DISABLE")}
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "oar", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=full_env,
    )


def test_version_names_oar_and_every_plugin(capsys):
    assert main(["--version"]) == 0
    out = capsys.readouterr().out
    from oar import __version__

    assert out.splitlines()[0] == f"oar {__version__}"
    assert "oar-kernels-cpu" in out and "(kernels_cpu)" in out


@pytest.fixture
def restore_registries():
    state = plugins.snapshot()
    yield
    plugins.restore(state)


class _FastRelu:
    @staticmethod
    def relu(inputs, attrs):
        return {"Out": np.maximum(inputs["X"], 0)}

    @hookimpl
    def oar_register_kernels(self, registry):
        registry.register_kernel("relu", "cpu", "float32", self.relu, priority=777)


def test_kernel_report_names_the_overriding_plugin(restore_registries, capsys):
    plugins.register(_FastRelu(), name="fast-relu")
    rows = [
        r
        for r in kernel_report("relu")["kernels"]
        if r["dtype"] == "float32" and r["device"] == "cpu"
    ]
    # the winner first, then every kernel it overrides (kernels_numba too, where installed)
    assert (rows[0]["plugin"], rows[0]["priority"], rows[0]["wins"]) == ("fast-relu", 777, True)
    assert ("kernels_cpu", 0, False) in [(r["plugin"], r["priority"], r["wins"]) for r in rows]
    assert not any(r["wins"] for r in rows[1:])
    assert main(["plugins", "--kernel", "relu"]) == 0
    out = capsys.readouterr().out
    assert "fast-relu" in out and "wins" in out and "overridden" in out
    # float64 is still served by the numpy kernel
    f64 = [
        r
        for r in kernel_report("relu")["kernels"]
        if r["dtype"] == "float64" and r["device"] == "cpu"
    ]
    assert "fast-relu" not in {r["plugin"] for r in f64} and f64[0]["wins"]


def test_kernel_report_json_and_unknown_op():
    r = _oar("plugins", "--kernel", "mul", "--json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["defined_by"] == "oar.ops"
    assert {row["plugin"] for row in report["kernels"] if row["device"] == "cpu"} == {"kernels_cpu"}
    bad = _oar("plugins", "--kernel", "no_such_op")
    assert bad.returncode != 0 and "unknown op type 'no_such_op'" in bad.stderr


def test_piping_into_head_exits_cleanly():
    cmd = f"{sys.executable} -m oar plugins | head -n 2"
    r = subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0
    assert len(r.stdout.splitlines()) == 2
    assert "Traceback" not in r.stderr and "BrokenPipe" not in r.stderr, r.stderr


def test_cpu_count_is_labelled():
    r = _oar("plugins", env={"CPU_NUM": "3"})
    assert r.returncode == 0, r.stderr
    cores = os.cpu_count()
    assert f"available, {cores} core{'s' if cores != 1 else ''}; 3 places (CPU_NUM)" in r.stdout


def test_disabled_plugin_is_listed_and_core_alone_gives_a_hint():
    # (the cuda plugin too: on a GPU machine it would still bring a usable device)
    r = _oar("plugins", env={"OAR_DISABLE_PLUGINS": "kernels_cpu,kernels_cuda"})
    assert r.returncode == 0, r.stderr
    line = next(x for x in r.stdout.splitlines() if "oar-kernels-cpu" in x)
    assert "disabled (OAR_DISABLE_PLUGINS)" in line
    # no table of hundreds of empty rows, but what to do about it
    assert "Kernel coverage" not in r.stdout
    assert "No usable device" in r.stdout
    assert "installed but disabled" in r.stdout


def test_kernel_not_found_for_a_third_party_op_does_not_suggest_the_cpu_plugin(
    restore_registries,
):
    from oar import fluid
    from oar.errors import KernelNotFoundError
    from oar.registry import OpDef

    class _OpOnly:
        @hookimpl
        def oar_register_ops(self, registry):
            registry.register_op(OpDef("my_third_party_op", ["X"], ["Out"], {}))

        @hookimpl
        def oar_register_kernels(self, registry):
            registry.register_kernel("my_third_party_op", "cpu", "float64", lambda i, a: i)

    plugins.register(_OpOnly(), name="my-ops")
    main_prog = fluid.Program()
    with fluid.program_guard(main_prog, fluid.Program()):
        x = fluid.data("x", [2], "float32")
        out = main_prog.global_block().create_var(name="o", dtype="float32", shape=[2])
        main_prog.global_block().append_op("my_third_party_op", {"X": [x]}, {"Out": [out]})
    with pytest.raises(KernelNotFoundError) as info:
        fluid.Executor(fluid.CPUPlace()).run(
            main_prog, feed={"x": np.ones(2, "float32")}, fetch_list=[out], scope=fluid.Scope()
        )
    msg = str(info.value)
    assert "it has kernels for: float64" in msg
    assert "defined by the plugin 'my-ops'" in msg
    assert "pip install" not in msg
