"""``load`` (fluid.layers.load): a variable filled from a Fluid or oar tensor file at run time."""

import atexit
import os
import tempfile

import numpy as np
import pytest
from oar import fluid
from oar.testing import OpCase, check_case

SAVED = np.arange(6, dtype="float32").reshape(2, 3)
CASE_FILE = os.path.join(tempfile.gettempdir(), f"oar_load_case_{os.getpid()}.tensor")


def _write_case_file() -> None:
    """The file the CASES read (other suites run every OpCase too, e.g. eager vs static)."""
    from oar.plugins import registries

    with open(CASE_FILE, "wb") as f:  # a Fluid LoDTensor file, written by oar-io's format
        registries().formats.get("fluid").write(f, "x", SAVED)
    atexit.register(lambda: os.path.exists(CASE_FILE) and os.remove(CASE_FILE))


_write_case_file()

CASES = [
    OpCase("load", {}, {"file_path": CASE_FILE}, ref=lambda **_: {"Out": SAVED}),
    OpCase(
        "load",
        {},
        {"file_path": CASE_FILE, "load_as_fp16": True},
        ref=lambda **_: {"Out": SAVED.astype("float16")},
        name="fp16",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_load_op(case):
    check_case(case)


@pytest.mark.parametrize("fp16", [False, True])
def test_load_fills_a_variable_from_a_saved_parameter(tmp_path, fp16):
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        x = fluid.data("x", [2, 3])
        fluid.layers.fc(x, 2, param_attr="fcw")
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    with fluid.scope_guard(scope):
        exe.run(start)
        fluid.io.save_vars(exe, str(tmp_path), main, vars=[main.global_block().var("fcw")])
        saved = np.array(scope.find_var("fcw").get_tensor())
    loader = fluid.Program()
    with fluid.program_guard(loader, fluid.Program()):
        t = fluid.layers.create_tensor("float32", name="t")
        fluid.layers.load(t, str(tmp_path / "fcw"), load_as_fp16=fp16)
    (got,) = exe.run(loader, fetch_list=[t], scope=fluid.Scope())
    assert got.dtype == (np.float16 if fp16 else np.float32)
    np.testing.assert_allclose(got, saved, rtol=1e-3 if fp16 else 0)


def test_load_says_which_file_is_wrong(tmp_path):
    bad = tmp_path / "junk"
    bad.write_bytes(b"not a tensor")
    loader = fluid.Program()
    with fluid.program_guard(loader, fluid.Program()):
        t = fluid.layers.create_tensor("float32", name="t")
        fluid.layers.load(t, str(bad))
    with pytest.raises(Exception, match="junk"):
        fluid.Executor(fluid.CPUPlace()).run(loader, fetch_list=[t])
    with pytest.raises(ValueError, match="file_path"):
        fluid.layers.load(t, "")
