"""Plugin discovery (entry points, opt-out env vars, broken plugins), registries and the CLI.

Discovery runs once per process at ``import oar``, so each scenario runs in a
fresh interpreter with a throw-away distribution (a ``*.dist-info`` folder with
an ``entry_points.txt``) put on its ``PYTHONPATH``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest
from oar.errors import RegistryError
from oar.registry import Attr, KernelRegistry, OpDef, OpRegistry


def make_dist(root: Path, name: str, entry_points: dict, modules: dict) -> Path:
    """A minimal installed distribution: ``name-0.1.dist-info`` plus plain modules, under ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    info = root / f"{name.replace('-', '_')}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    lines = ["[oar]"] + [f"{k} = {v}" for k, v in entry_points.items()]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n")
    for mod, src in modules.items():
        (root / f"{mod}.py").write_text(textwrap.dedent(src))
    return root


def run_py(
    code: str, path: Path | None = None, env: dict | None = None
) -> subprocess.CompletedProcess:
    full_env = dict(os.environ)
    for k in ("OAR_DISABLE_PLUGINS", "OAR_DISABLE_PLUGIN_AUTOLOAD", "OAR_TRACE_PLUGINS"):
        full_env.pop(k, None)
    if path is not None:
        full_env["PYTHONPATH"] = str(path) + os.pathsep + full_env.get("PYTHONPATH", "")
    full_env.update(env or {})
    with tempfile.TemporaryDirectory() as tmp:
        script = (
            Path(tmp) / "plugin_script.py"
        )  # a file, so error messages can quote the user's line
        script.write_text(textwrap.dedent(code))
        return subprocess.run(
            [sys.executable, str(script)], capture_output=True, text=True, env=full_env, timeout=60
        )


COUNTING_RELU = """
    import numpy as np
    from oar.hookspecs import hookimpl

    CALLS = []

    def relu(inputs, attrs):
        CALLS.append(inputs["X"].shape)
        return {"Out": np.maximum(inputs["X"], 0)}

    @hookimpl
    def oar_register_kernels(registry):
        registry.register_kernel("relu", "cpu", ("float32", "float64"), relu, priority=100)
"""

RUN_RELU = """
    import numpy as np
    from oar import fluid
    x = fluid.layers.data("x", shape=[3], dtype="float32")
    y = fluid.layers.relu(x)
    exe = fluid.Executor(fluid.CPUPlace())
    out, = exe.run(feed={"x": np.array([[-1, 0, 2]], "float32")}, fetch_list=[y])
    assert out.tolist() == [[0, 0, 2]], out
"""


def test_entry_point_plugin_is_loaded_and_overrides_a_kernel(tmp_path):
    path = make_dist(
        tmp_path,
        "oar-counting-relu",
        {"counting_relu": "counting_relu"},
        {"counting_relu": COUNTING_RELU},
    )
    r = run_py(
        RUN_RELU
        + """
    import counting_relu
    from oar.plugins import plugin_infos
    print("calls", len(counting_relu.CALLS))
    print("dists", sorted(p.distribution for p in plugin_infos()))
    """,
        path,
    )
    assert r.returncode == 0, r.stderr
    assert "calls 1" in r.stdout
    assert "oar-counting-relu" in r.stdout


def test_disable_one_plugin_by_entry_point_or_distribution_name(tmp_path):
    path = make_dist(
        tmp_path,
        "oar-counting-relu",
        {"counting_relu": "counting_relu"},
        {"counting_relu": COUNTING_RELU},
    )
    check = (
        RUN_RELU
        + """
    import counting_relu
    print("calls", len(counting_relu.CALLS))
    """
    )
    for value in ("counting_relu", "oar-counting-relu", "something_else, counting_relu"):
        r = run_py(check, path, {"OAR_DISABLE_PLUGINS": value})
        assert r.returncode == 0, r.stderr
        assert "calls 0" in r.stdout, value


def test_disable_autoload_loads_no_entry_points():
    r = run_py(
        """
    import oar
    from oar.plugins import plugin_infos, registries
    print(sorted(p.name for p in plugin_infos()), registries().devices.names())
    """,
        env={"OAR_DISABLE_PLUGIN_AUTOLOAD": "1"},
    )
    assert r.returncode == 0, r.stderr
    # core's own op definitions are still there; the cpu device (a plugin) is not
    assert "['oar.ops'] []" in r.stdout


def test_without_kernels_running_an_op_names_op_place_and_package():
    r = run_py(
        """
    from oar import fluid
    from oar.errors import KernelNotFoundError
    x = fluid.layers.fill_constant(shape=[2], dtype="float32", value=1.0)
    try:
        fluid.Executor(fluid.CPUPlace()).run(fetch_list=[x])
    except Exception as exc:
        print(type(exc).__name__, exc)
    """,
        env={"OAR_DISABLE_PLUGINS": "kernels_cpu"},
    )
    assert r.returncode == 0, r.stderr
    # no cpu device: the plugin is installed but disabled, so the error says how to re-enable it
    # (installing it again would not help) and does not offer the GPU-only CPU fallback
    assert "oar-kernels-cpu is installed but disabled by OAR_DISABLE_PLUGINS" in r.stdout
    assert "remove 'kernels_cpu'" in r.stdout
    assert "OAR_FALLBACK_DEVICE" not in r.stdout


def test_kernel_missing_for_a_device_raises_kernel_not_found(tmp_path):
    """A plugin adds a device with no kernels: running there names op, device and package."""
    path = make_dist(
        tmp_path,
        "oar-fake-device",
        {"fake_device": "fake_device"},
        {
            "fake_device": """
        import numpy as np
        from oar.hookspecs import hookimpl
        from oar.registry import Device

        @hookimpl
        def oar_register_devices(registry):
            registry.register_device(Device("fakedev", lambda: True, lambda: 1, lambda: np,
                                            lambda a, i: a, lambda a: a))
    """
        },
    )
    r = run_py(
        """
    from oar import fluid
    from oar.errors import KernelNotFoundError
    from oar.places import Place

    class FakePlace(Place):
        device = "fakedev"
        device_id = 0

    x = fluid.layers.fill_constant(shape=[2], dtype="float32", value=1.0)  # marker-line
    try:
        fluid.Executor(FakePlace()).run(fetch_list=[x])
    except KernelNotFoundError as exc:
        print("KNF", exc)
    """,
        path,
    )
    assert r.returncode == 0, r.stderr
    assert "KNF op 'fill_constant' has no kernel for device 'fakedev'" in r.stdout
    assert "pip install oar-kernels-fakedev" in r.stdout
    assert "plugin_script.py:10" in r.stdout and "marker-line" in r.stdout


def test_broken_entry_point_is_logged_and_listed_not_fatal(tmp_path):
    path = make_dist(tmp_path, "oar-broken", {"broken": "oar_no_such_module_xyz"}, {})
    r = run_py(
        RUN_RELU
        + """
    from oar.plugins import plugin_infos
    bad = [p for p in plugin_infos() if p.error]
    print("bad", [(p.name, p.distribution) for p in bad], "oar_no_such_module_xyz" in bad[0].error)
    """,
        path,
    )
    assert r.returncode == 0, r.stderr
    assert "bad [('broken', 'oar-broken')] True" in r.stdout
    assert "oar plugin broken from oar-broken failed to load" in r.stderr
    cli = subprocess.run(
        [sys.executable, "-m", "oar", "plugins"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(path)},
        timeout=60,
    )
    assert cli.returncode == 0, cli.stderr
    assert "broken" in cli.stdout and "FAILED" in cli.stdout


BROKEN_PLUGINS = {
    # raises in its hook after registering an op and a kernel: both must be rolled back
    "raises_plugin": """
        import numpy as np
        from oar.api import OpDef, hookimpl

        @hookimpl
        def oar_register_ops(registry):
            registry.register_op(OpDef("half_registered_op", ["X"], ["Out"]))

        @hookimpl
        def oar_register_kernels(registry):
            registry.register_kernel("half_registered_op", "cpu", None, lambda i, a: i)
            raise RuntimeError("plugin bug: boom")
    """,
    # two kernels for (sigmoid, cpu, float64) at the same priority 7
    "dup_plugin": """
        from oar.api import hookimpl

        @hookimpl
        def oar_register_kernels(registry):
            registry.register_kernel("sigmoid", "cpu", ("float64",), lambda i, a: i, priority=7)
            registry.register_kernel("sigmoid", "cpu", None, lambda i, a: i, priority=3)
            registry.register_kernel(
                "sigmoid", "cpu", ("float32", "float64"), lambda i, a: i, priority=7
            )
    """,
    # a misspelt hook name (pluggy's check_pending would refuse the whole process)
    "typo_plugin": """
        from oar.api import hookimpl

        @hookimpl
        def oar_register_kernel(registry):  # missing the final 's'
            pass
    """,
}


@pytest.fixture(scope="module")
def broken_dist(tmp_path_factory):
    eps = {"raises": "raises_plugin", "dup": "dup_plugin", "typo": "typo_plugin"}
    return make_dist(tmp_path_factory.mktemp("broken"), "oar-broken3", eps, BROKEN_PLUGINS)


def test_broken_plugins_are_failed_and_rolled_back_and_oar_still_works(broken_dist):
    r = run_py(
        RUN_RELU
        + """
    from oar.api import registries
    from oar.plugins import plugin_infos
    reg = registries()
    for p in plugin_infos():
        print("INFO", p.name, "|", p.error)
    print("half op left:", "half_registered_op" in reg.ops)
    print("sigmoid left:", sorted({e.priority for e in reg.kernels.entries()
                                  if e.op_type == "sigmoid" and e.device == "cpu"}))
    print("relu plugin:", reg.kernels.lookup("relu", "cpu", "float32").plugin)
    """,
        broken_dist,
    )
    assert r.returncode == 0, r.stderr
    infos = dict(line[5:].split(" | ") for line in r.stdout.splitlines() if line.startswith("INFO"))
    assert "RuntimeError: plugin bug: boom" in infos["raises"]
    assert "oar_register_kernels" in infos["raises"]
    assert "registered twice" in infos["dup"] and "priority 7" in infos["dup"]
    assert "unknown hook oar_register_kernel" in infos["typo"]
    assert infos["kernels_cpu"] == "None"
    assert "half op left: False" in r.stdout  # its op definition was rolled back too
    # dup's priority 7 and 3 kernels were rolled back (50: oar-kernels-numba's, where installed)
    assert re.search(r"sigmoid left: \[0(, 50)?\]\n", r.stdout), r.stdout
    # the built-in relu (oar-kernels-numba overrides the numpy one where it is installed)
    assert re.search(r"relu plugin: kernels_(cpu|numba)\n", r.stdout)


def test_oar_plugins_lists_broken_plugins_as_failed_with_the_reason(broken_dist):
    env = {**os.environ, "PYTHONPATH": str(broken_dist)}
    table = subprocess.run(
        [sys.executable, "-m", "oar", "plugins"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert table.returncode == 0, table.stderr
    lines = {ln.split()[0]: ln for ln in table.stdout.splitlines() if ln.startswith("  ")}
    assert "FAILED" in lines["raises"] and "boom" in lines["raises"]
    assert "FAILED" in lines["dup"] and "registered twice" in lines["dup"]
    assert "FAILED" in lines["typo"] and "unknown hook" in lines["typo"]
    js = subprocess.run(
        [sys.executable, "-m", "oar", "plugins", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert js.returncode == 0, js.stderr
    report = json.loads(js.stdout)
    errors = {p["name"]: p["error"] for p in report["plugins"]}
    assert "boom" in errors["raises"] and "unknown hook" in errors["typo"]
    assert errors["kernels_cpu"] is None
    assert "half_registered_op" not in report["ops"]


def test_trace_plugins_prints_hook_calls(broken_dist):
    r = run_py("import oar", env={"OAR_TRACE_PLUGINS": "1"})
    assert r.returncode == 0, r.stderr
    assert "[oar-plugins] loaded kernels_cpu" in r.stderr
    for hook in ("oar_register_ops", "oar_register_devices", "oar_register_kernels"):
        assert f"[oar-plugins]   {hook} [hook]" in r.stderr, hook
        assert f"finish {hook} --> " in r.stderr, hook


def test_disabled_plugin_is_blocked_in_the_plugin_manager(broken_dist):
    r = run_py(
        """
    from oar.plugins import _manager, plugin_infos
    pm = _manager()
    print("blocked", pm.is_blocked("raises"), pm.is_blocked("typo"), pm.is_blocked("dup"))
    print("disabled", sorted(p.name for p in plugin_infos() if p.disabled))
    print("failed", sorted(p.name for p in plugin_infos() if p.error))
    """,
        broken_dist,
        env={"OAR_DISABLE_PLUGINS": "raises,oar-broken3"},
    )
    assert r.returncode == 0, r.stderr
    assert "blocked True True True" in r.stdout
    # disabled plugins are listed as such (for `oar plugins`), never loaded, never failed
    assert "disabled ['dup', 'raises', 'typo']" in r.stdout, r.stdout
    assert "'raises'" not in r.stdout.split("failed")[1]


def test_plugin_registered_by_hand_that_fails_raises_and_is_rolled_back():
    r = run_py(
        """
    import oar.api
    from oar.errors import RegistryError

    class P:
        @oar.api.hookimpl
        def oar_register_kernels(self, registry):
            registry.register_kernel("relu", "cpu", ("float16",), lambda i, a: i, priority=55)
            registry.register_kernel("relu", "cpu", ("float32", "float16"), lambda i, a: i, priority=55)

    try:
        oar.api.register_plugin(P(), name="by-hand-dup")
    except RegistryError as exc:
        print("raised", "registered twice" in str(exc))
    kernels = oar.api.registries().kernels
    print("left", kernels.lookup("relu", "cpu", "float16").priority)
    """
    )
    assert r.returncode == 0, r.stderr
    assert "raised True" in r.stdout
    assert "left 0" in r.stdout


def test_register_by_hand_overrides_builtin_kernel_in_executor():
    """``oar.plugins.register`` at run time; checked in a child so the override stays local."""
    r = run_py("""
    import numpy as np
    import oar
    from oar import fluid
    from oar.hookspecs import hookimpl

    calls = []

    class Plugin:
        @hookimpl
        def oar_register_kernels(self, registry):
            def relu(inputs, attrs):
                calls.append(1)
                return {"Out": np.maximum(inputs["X"], 0)}
            # above every built-in relu (oar-kernels-numba's is at 50 where installed)
            registry.register_kernel("relu", "cpu", ("float32",), relu, priority=90)

    x = fluid.layers.data("x", shape=[2], dtype="float32")
    y = fluid.layers.relu(x)
    exe = fluid.Executor(fluid.CPUPlace())
    feed = {"x": np.array([[-1, 3]], "float32")}
    exe.run(feed=feed, fetch_list=[y])
    assert calls == []
    oar.plugins.register(Plugin(), name="by-hand-relu")
    z = fluid.layers.relu(x)  # a new op: the cached plan is rebuilt and binds the new kernel
    out, = exe.run(feed=feed, fetch_list=[z])
    entry = oar.plugins.registries().kernels.lookup("relu", "cpu", "float32")
    print(len(calls), out.tolist(), entry.plugin, entry.priority)
    """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["2", "[[0.0,", "3.0]]", "by-hand-relu", "90"]  # both relu ops ran


def test_registry_refuses_duplicate_ops():
    reg = OpRegistry()
    reg.current_plugin = "first"
    reg.register_op(OpDef("my_op", ["X"], ["Out"], {"k": Attr(int, 1)}))
    reg.current_plugin = "second"
    with pytest.raises(RegistryError, match="'my_op' is registered twice: by first and second"):
        reg.register_op(OpDef("my_op", ["X"], ["Out"]))


def test_registry_refuses_duplicate_kernels_at_the_same_priority():
    ops = OpRegistry()
    ops.register_op(OpDef("my_op", ["X"], ["Out"]))
    kernels = KernelRegistry(ops)
    kernels.current_plugin = "a"
    kernels.register_kernel("my_op", "cpu", ("float32",), lambda i, a: {}, priority=0)
    kernels.current_plugin = "b"
    with pytest.raises(RegistryError, match="registered twice: by a and b"):
        kernels.register_kernel("my_op", "cpu", "float32", lambda i, a: {}, priority=0)
    # another priority is an override, and the highest wins
    k2 = lambda i, a: {"Out": 2}
    kernels.register_kernel("my_op", "cpu", None, k2, priority=5)
    assert kernels.lookup("my_op", "cpu", "float32").kernel is k2
    assert kernels.lookup("my_op", "cpu", "int64").kernel is k2


def test_registry_refuses_kernel_for_unknown_op():
    kernels = KernelRegistry(OpRegistry())
    with pytest.raises(RegistryError, match="kernel for unknown op 'nope'"):
        kernels.register_kernel("nope", "cpu", None, lambda i, a: {})


def test_unknown_op_type_is_a_clear_error():
    from oar import fluid

    with pytest.raises(RegistryError, match="unknown op type 'no_such_op'"):
        fluid.Program().global_block().append_op("no_such_op", {}, {})


def test_attr_validation():
    opdef = OpDef(
        "t",
        ["X"],
        ["Out"],
        {"k": Attr(int, 1, lambda v: None if v > 0 else "must be > 0"), "req": Attr(str)},
    )
    assert opdef.complete_attrs({"req": "a"}) == {"k": 1, "req": "a"}
    from oar.errors import AttrError

    with pytest.raises(AttrError, match="'req' is required"):
        opdef.complete_attrs({})
    with pytest.raises(AttrError, match="'k' must be > 0, given -1"):
        opdef.complete_attrs({"req": "a", "k": -1})
    with pytest.raises(AttrError, match="'k' expects int, given str"):
        opdef.complete_attrs({"req": "a", "k": "3"})
    with pytest.raises(AttrError, match="unknown attribute 'kk'"):
        opdef.complete_attrs({"req": "a", "kk": 3})


# --- the CLI ------------------------------------------------------------------------------------


def test_cli_plugins_table():
    exe = Path(sys.executable).with_name("oar")
    cmd = [str(exe), "plugins"] if exe.exists() else [sys.executable, "-m", "oar", "plugins"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "kernels_cpu" in r.stdout and "oar-kernels-cpu" in r.stdout
    assert "available" in r.stdout
    assert "Kernel coverage" in r.stdout
    assert any(line.split()[:2] == ["mul", "yes"] for line in r.stdout.splitlines())


def test_python_m_oar_plugins_json():
    r = subprocess.run(
        [sys.executable, "-m", "oar", "plugins", "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    dists = {p["distribution"] for p in report["plugins"]}
    assert {"oar-core", "oar-kernels-cpu"} <= dists
    cpu = [d for d in report["devices"] if d["name"] == "cpu"]
    assert cpu and cpu[0]["available"] is True and cpu[0]["count"] >= 1
    assert "cpu" in report["ops"]["mul"]["kernels"]
    assert report["ops"]["mul"]["defined_by"] == "oar.ops"


def test_cli_without_command_prints_help():
    from oar.cli import main

    assert main([]) == 2


def test_facade_owner_table_matches_what_plugins_contribute():
    """``_facade.OWNERS`` (used when a plugin is missing) lists exactly the installed plugins' names."""
    from oar._facade import OWNERS
    from oar.plugins import _manager, plugin_infos

    pm = _manager()
    dist = {p.name: p.distribution for p in plugin_infos()}
    contributed = {}
    for name, plugin in pm.list_name_plugin():
        hook = getattr(plugin, "oar_fluid_api", None)
        if hook is None:
            continue
        for key in hook() or {}:
            contributed[key] = dist[name]
    owned_by_installed = {k: d for k, d in OWNERS.items() if d in set(contributed.values())}
    assert owned_by_installed == contributed


def test_missing_plugin_name_says_what_to_install():
    """Without oar-io, ``fluid.io.is_parameter`` names the plugin and the pip command."""
    r = run_py(
        """
    from oar import fluid
    from oar.errors import MissingPluginError
    for path in ("io.is_parameter", "io.get_program_parameter", "save_dygraph"):
        obj = fluid
        try:
            for part in path.split("."):
                obj = getattr(obj, part)
        except MissingPluginError as exc:
            print("missing", path, "pip install oar-io" in str(exc))
    """,
        env={"OAR_DISABLE_PLUGINS": "oar-io"},
    )
    assert r.returncode == 0, r.stderr
    for path in ("io.is_parameter", "io.get_program_parameter", "save_dygraph"):
        assert f"missing {path} True" in r.stdout, r.stdout


def test_scoped_registry_undoes_registrations():
    from oar.api import registries
    from oar.testing import scoped_registry

    reg = registries()
    before = (reg.ops.types(), len(reg.kernels.entries()), reg.formats.names())
    relu_priority = reg.kernels.lookup("relu", "cpu", "float32").priority  # 0, or numba's 50
    with scoped_registry() as scoped:
        scoped.ops.register_op(OpDef("_scoped_only", ["X"], ["Out"]))
        scoped.kernels.register_kernel("_scoped_only", "cpu", None, lambda i, a: i)
        scoped.kernels.register_kernel("relu", "cpu", ("float32",), lambda i, a: i, priority=99)
        scoped.formats.register("_scoped_fmt", object())
        assert reg.kernels.lookup("relu", "cpu", "float32").priority == 99
    assert (reg.ops.types(), len(reg.kernels.entries()), reg.formats.names()) == before
    assert "_scoped_only" not in reg.ops
    assert reg.kernels.lookup("relu", "cpu", "float32").priority == relu_priority


def test_dir_of_facade_namespaces_lists_plugin_names():
    """``dir(fluid.dygraph)`` shows ``DataParallel`` (oar-dist), ``dir(fluid.io)`` shows
    ``PyReader`` (oar-data)...: every name a plugin contributes, and every listed name resolves."""
    import importlib

    import oar
    from oar import fluid
    from oar.plugins import registries

    spaces = {"": fluid, "oar.": oar}
    for prefix in ("dygraph", "io", "contrib", "core"):
        spaces[prefix + "."] = getattr(fluid, prefix)
    for key in registries().fluid_api:
        prefix, _, last = key.rpartition(".")
        space = spaces.get(prefix + "." if prefix else "")
        if space is not None:
            assert last in dir(space), (key, space.__name__)
    for space in spaces.values():
        listed = dir(space)
        assert listed == sorted(set(listed))
        for name in listed:
            getattr(space, name)
    assert {"DataParallel", "ParallelEnv", "Linear"} <= set(
        dir(importlib.import_module("oar.fluid.dygraph"))
    )
