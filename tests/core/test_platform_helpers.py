"""Fluid's platform helpers: run_check, require_version, device_guard, load_op_library, compat, core."""

from __future__ import annotations

import textwrap

import numpy as np
import oar
import pytest
from oar import fluid
from oar.errors import ArgumentError, ArgumentTypeError


def test_run_check_passes(capsys):
    fluid.install_check.run_check()
    out = capsys.readouterr().out
    assert "works well on SINGLE GPU or CPU" in out
    assert "works well on MUTIPLE GPU or CPU" in out


def test_require_version_compares_with_the_fluid_api_level():
    fluid.require_version("1.5")
    fluid.require_version("1.8.0", "1.8.5")
    with pytest.raises(Exception, match="VersionError.*9.0 or higher"):
        fluid.require_version("9.0")
    with pytest.raises(Exception, match=r"VersionError.*in \[1.6, 1.7\]"):
        fluid.require_version("1.6", "1.7")
    with pytest.raises(ArgumentTypeError, match="must be str"):
        fluid.require_version(1)
    with pytest.raises(ArgumentError, match="version like"):
        fluid.require_version("one.two")


def test_device_guard_scopes_the_device():
    from oar.framework.platform import current_device

    assert current_device() is None
    with fluid.device_guard("gpu:1"):
        assert current_device() == "gpu:1"
        with fluid.device_guard("cpu"):
            assert current_device() == "cpu"
        assert current_device() == "gpu:1"
    assert current_device() is None
    with pytest.raises(ArgumentError, match="device_guard"):
        with fluid.device_guard("tpu"):
            pass


def test_load_op_library_registers_a_python_plugin(tmp_path):
    lib = tmp_path / "my_ops.py"
    lib.write_text(
        textwrap.dedent(
            """
            import numpy as np
            from oar.api import hookimpl
            CALLS = []

            def relu(inputs, attrs):
                CALLS.append(1)
                return {"Out": np.maximum(inputs["X"], 0)}

            @hookimpl
            def oar_register_kernels(registry):
                registry.register_kernel("relu", "cpu", ("float32",), relu, priority=5000)
            """
        )
    )
    from oar import plugins

    state = plugins.snapshot()
    try:
        module = fluid.load_op_library(str(lib))
        with fluid.dygraph.guard():
            x = fluid.dygraph.to_variable(np.array([-1.0, 2.0], dtype="float32"))
            y = fluid.layers.relu(x)
        np.testing.assert_array_equal(y.numpy(), [0.0, 2.0])
        assert module.CALLS
    finally:
        plugins.restore(state)
    with pytest.raises(ArgumentError, match="compiled Fluid op library"):
        fluid.load_op_library("custom_op.so")
    empty = tmp_path / "no_hooks.py"
    empty.write_text("X = 1\n")
    with pytest.raises(ArgumentError, match="no oar_register_ops"):
        fluid.load_op_library(str(empty))


def test_cuda_pinned_places_without_cuda_says_so():
    if fluid.is_compiled_with_cuda():
        pytest.skip("a CUDA device is present")
    with pytest.raises(ArgumentError, match="CUDA"):
        fluid.cuda_pinned_places(1)


def test_weighted_average_matches_fluid():
    # values from Fluid 1.8.5: add(1.0, 2), add(4.0, 1) -> 2.0; then add([1, 3], 1) -> [1.75, 2.25]
    w = fluid.average.WeightedAverage()
    w.add(1.0, 2)
    w.add(4.0, 1)
    assert w.eval() == 2.0
    w.add(np.array([1.0, 3.0]), 1)
    np.testing.assert_allclose(w.eval(), [1.75, 2.25])
    w.reset()
    with pytest.raises(ValueError, match="no data"):
        w.eval()
    with pytest.raises(ValueError, match="value"):
        w.add("x", 1)


def test_compat_matches_fluid():
    # Fluid 1.8.5: round(2.5) == 3.0, round(-2.5) == -3.0, to_text([b"a"]) == ["a"]
    assert oar.compat.round(2.5) == 3.0
    assert oar.compat.round(-2.5) == -3.0
    assert oar.compat.round(1.25, 1) == 1.3
    assert oar.compat.to_text(b"ab") == "ab"
    assert oar.compat.to_text([b"a"]) == ["a"]
    assert oar.compat.to_bytes({"k": "v"}) == {b"k": b"v"}
    items = [b"x"]
    assert oar.compat.to_text(items, inplace=True) is items and items == ["x"]
    assert oar.compat.floor_division(7, 2) == 3
    assert oar.compat.get_exception_message(ValueError("boo")) == "boo"


def test_core_names_users_touch():
    core = fluid.core
    assert core.globals()["FLAGS_check_nan_inf"] is False
    assert "FLAGS_check_nan_inf" in core.globals().keys()
    assert core.op_support_gpu("mul") == ("cuda" in _devices())
    assert isinstance(fluid.CPUPlace(), core.Place)
    from oar.dygraph.varbase import VarBase

    assert core.VarBase is VarBase
    with pytest.raises(core.EnforceNotMet):
        fluid.require_version(1)


def _devices() -> set:
    from oar.plugins import registries

    return registries().kernels.devices_for("mul")
