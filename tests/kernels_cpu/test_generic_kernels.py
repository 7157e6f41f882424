"""kernels-cpu's kernels are array-generic: registered per device with its array module.

The conformance suite (``conftest.py``) runs every OpCase on a ``checking``
device whose ``xp`` is a numpy proxy with its own array type; these tests
check the rules around it: kernel modules compute only through ``xp`` (numpy
only for dtype metadata), ``xp`` is bound once per device (no per-call
lookup), numpy-only kernels say so and stay off other devices, and families
load lazily.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import numpy as np
import oar_kernels_cpu.kernels as kernels_pkg
import pytest
from oar.kernel_family import family_kernels
from oar.plugins import registries
from oar.testing import CheckingArrayModule, OpCase, check_case, place_for, use_place

KERNELS = Path(kernels_pkg.__file__).parent
# numpy attributes that are metadata (dtypes, limits), the same for every array module
NUMPY_METADATA = {
    "dtype", "finfo", "iinfo", "result_type", "issubdtype", "promote_types", "can_cast",
    "float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16",
    "uint32", "uint64", "bool_",
    "integer", "floating", "number", "generic", "inf", "nan", "pi", "e",
}  # fmt: skip


# helper modules used only by numpy-only (generic=False) kernel modules
NUMPY_ONLY_HELPERS = {
    "_sequence.py": "LoD segment helpers of the sequence kernels",
    "_poly_mask.py": "COCO polygon rasterisation of generate_mask_labels (numpy-only family)",
}


def _numpy_only(path: Path) -> bool:
    """A family whose every kernel says ``generic=False`` may compute with numpy."""
    if path.name in NUMPY_ONLY_HELPERS:
        return True
    if path.name.startswith("_"):
        return False
    specs = family_kernels(f"oar_kernels_cpu.kernels.{path.stem}")
    return bool(specs) and not any(s.generic for s in specs)


@pytest.mark.parametrize("path", sorted(KERNELS.glob("*.py")), ids=lambda p: p.name)
def test_kernel_modules_compute_through_xp_only(path):
    if _numpy_only(path):
        pytest.skip(f"{path.name}: numpy-only kernels (generic=False)")
    bad = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if node.value.id == "np" and node.attr not in NUMPY_METADATA:
                bad.append(f"{path.name}:{node.lineno} np.{node.attr}")
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("numpy"):
            bad.append(f"{path.name}:{node.lineno} from {node.module} import ...")
    assert not bad, (
        "kernels compute with the module's `xp = array_module(__name__)` (or a _util helper), "
        "so other devices can reuse them; np. is for dtype metadata only. A kernel that cannot "
        "be generic says @kernel(..., generic=False). Found: " + ", ".join(bad)
    )


def test_every_generic_family_binds_xp_once_at_module_level():
    for path in sorted(KERNELS.glob("[!_]*.py")):
        if not _numpy_only(path):
            assert "\nxp = array_module(__name__)\n" in path.read_text(), path.name


def test_instantiation_binds_the_given_module_in_the_kernels_globals():
    xp = CheckingArrayModule()
    specs = family_kernels("oar_kernels_cpu.kernels.softmax", xp, "test-bind")
    fn = next(s.fn for s in specs if s.op_type == "softmax")
    assert fn.__globals__["xp"] is xp  # a plain global: no lookup per call
    numpy_fn = next(s.fn for s in family_kernels("oar_kernels_cpu.kernels.softmax"))
    assert numpy_fn.__globals__["xp"] is np and numpy_fn is not fn
    assert family_kernels("oar_kernels_cpu.kernels.softmax", xp, "test-bind")[0].fn is specs[0].fn
    xp.counts.clear()
    out = fn({"X": np.ones((2, 3)).view(type(xp.zeros(1)))}, {"axis": -1})["Out"]
    assert type(out).__name__ == "CheckingArray" and xp.counts["exp"] == 1


def test_numpy_only_kernels_stay_off_other_devices_and_are_listed():
    reg = registries()
    cpu = reg.kernels.lookup("print", "cpu", "float32")
    assert cpu is not None and not cpu.generic
    assert reg.kernels.lookup("print", "checking", "float32") is None
    assert reg.kernels.lookup("softmax", "checking", "float32").generic
    from oar.cli import plugins_report

    assert "print" in plugins_report()["numpy_only_kernels"]["cpu"]


def test_a_numpy_call_in_a_kernel_is_caught_on_the_checking_device():
    """The checking device can fail: a kernel that returns a plain numpy array is refused."""
    code = (
        "import importlib.util, numpy as np, oar.plugins, pytest\n"
        "spec = importlib.util.spec_from_file_location('c', CONFTEST)\n"
        "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
        "from oar.hookspecs import hookimpl\n"
        "class P:\n"
        "    @hookimpl\n"
        "    def oar_register_kernels(self, registry):\n"
        "        registry.register_kernel('softmax', 'checking', None,\n"
        "            lambda i, a: {'Out': np.zeros(i['X'].shape)}, priority=99)\n"
        "oar.plugins.register(P(), name='numpy-softmax')\n"
        "from oar.testing import OpCase, run_forward, place_for\n"
        "try:\n"
        "    run_forward(OpCase('softmax', {'X': np.ones((2, 3))}), place_for('checking'))\n"
        "except AssertionError as e:\n"
        "    print('REFUSED', e)\n"
    )
    code = f"CONFTEST = {str(Path(__file__).parent / 'conftest.py')!r}\n" + code
    # run in a child so the override stays local
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "REFUSED" in out.stdout and "plain numpy array" in out.stdout, out.stdout + out.stderr


def test_families_load_lazily():
    code = (
        "import sys\n"
        "from oar import fluid\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('oar_kernels_cpu.kernels.'))\n"
        "print('AT_IMPORT', loaded)\n"
        "import numpy as np\n"
        "exe = fluid.Executor(fluid.CPUPlace())\n"
        "x = fluid.layers.data('x', [3])\n"
        "y = fluid.layers.softmax(x)\n"
        "exe.run(feed={'x': np.ones((1, 3), 'float32')}, fetch_list=[y])\n"
        "print('AFTER', sorted(m for m in sys.modules if m.startswith('oar_kernels_cpu.kernels.')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "AT_IMPORT []" in out.stdout
    after = out.stdout.split("AFTER")[1]
    assert (
        "oar_kernels_cpu.kernels.softmax" in after and "oar_kernels_cpu.kernels.conv'" not in after
    )


def test_each_family_declares_kernels_only_for_its_own_ops():
    """Lazy loading finds an op's kernels in the module named after its op family."""
    ops = registries().ops
    wrong = [
        f"{k.op_type} declared in {name} but defined by oar.ops.{ops.family(k.op_type)}"
        for name in kernels_pkg.kernel_modules()
        for k in family_kernels(f"oar_kernels_cpu.kernels.{name}")
        if ops.family(k.op_type) != name
    ]
    assert not wrong


def test_suite_runs_on_a_checking_place_directly():
    case = OpCase(
        "elementwise_mul",
        {"X": np.arange(6.0).reshape(2, 3), "Y": np.ones(3)},
        {"axis": 1},
        ref=lambda X, Y, axis: {"Out": X * Y},
        grad=["X", "Y"],
    )
    with use_place(place_for("checking")):
        check_case(case)


def test_xp_is_resolved_once_when_the_first_family_loads():
    """A device plugin's array module (cupy) is imported only when a kernel is first looked up."""
    from oar.registry import KernelRegistry
    from oar_kernels_cpu import register_generic_kernels

    calls = []
    xp = CheckingArrayModule()
    kernels = KernelRegistry(registries().ops)  # a registry of its own: the session's stays as is
    register_generic_kernels(kernels, "lazydev", lambda: calls.append(1) or xp)
    assert calls == []
    entry = kernels.lookup("softmax", "lazydev", "float32")
    assert calls == [1] and entry.generic and entry.kernel.__globals__["xp"] is xp
    assert kernels.lookup("relu", "lazydev", "float32").kernel.__globals__["xp"] is xp
    assert calls == [1]
    assert kernels.lookup("print", "lazydev", "float32") is None  # numpy-only
