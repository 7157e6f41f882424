"""fluid.set_flags / fluid.get_flags and FLAGS_* environment variables."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from oar import flags as oar_flags
from oar import fluid


@pytest.fixture(autouse=True)
def _restore_flags():
    saved = dict(oar_flags._values)
    yield
    oar_flags.set_flags({k: v for k, v in saved.items() if oar_flags._values[k] != v})


def test_get_and_set_round_trip_with_fluid_defaults():
    assert fluid.get_flags("FLAGS_check_nan_inf") == {"FLAGS_check_nan_inf": False}
    got = fluid.get_flags(["FLAGS_eager_delete_tensor_gb", "FLAGS_allocator_strategy"])
    assert got == {"FLAGS_eager_delete_tensor_gb": 0.0, "FLAGS_allocator_strategy": "auto_growth"}
    fluid.set_flags(
        {
            "FLAGS_check_nan_inf": 1,  # Fluid takes 0/1 for a bool
            "FLAGS_eager_delete_tensor_gb": 0,
            "FLAGS_fraction_of_gpu_memory_to_use": 0.5,
            "FLAGS_cudnn_deterministic": True,
            "FLAGS_conv_workspace_size_limit": 1024,
            "FLAGS_use_mkldnn": False,
            "FLAGS_rpc_deadline": 5000,
        }
    )
    got = fluid.get_flags(
        ("FLAGS_check_nan_inf", "FLAGS_eager_delete_tensor_gb", "FLAGS_conv_workspace_size_limit")
    )
    assert got == {
        "FLAGS_check_nan_inf": True,
        "FLAGS_eager_delete_tensor_gb": 0.0,
        "FLAGS_conv_workspace_size_limit": 1024,
    }
    assert type(got["FLAGS_eager_delete_tensor_gb"]) is float
    assert oar_flags.CHECK_NAN_INF is True


def test_unknown_flags_and_bad_values_raise_clearly():
    with pytest.raises(ValueError, match="FLAGS_nope cannot set"):
        fluid.set_flags({"FLAGS_nope": 1})
    with pytest.raises(ValueError, match="FLAGS_nope cannot get"):
        fluid.get_flags(["FLAGS_nope"])
    with pytest.raises(TypeError, match="should be a dict"):
        fluid.set_flags(["FLAGS_check_nan_inf"])
    with pytest.raises(TypeError, match="list, tuple or string"):
        fluid.get_flags(3)
    with pytest.raises(TypeError, match="FLAGS_paddle_num_threads takes a int, given str 'many'"):
        fluid.set_flags({"FLAGS_paddle_num_threads": "many"})
    with pytest.raises(TypeError, match="FLAGS_check_nan_inf takes a bool"):
        fluid.set_flags({"FLAGS_check_nan_inf": 2})
    # nothing is applied when one entry is bad
    with pytest.raises(ValueError):
        fluid.set_flags({"FLAGS_check_nan_inf": True, "FLAGS_bad": 1})
    assert fluid.get_flags("FLAGS_check_nan_inf")["FLAGS_check_nan_inf"] is False


def test_flags_come_from_the_environment():
    env = dict(os.environ, FLAGS_check_nan_inf="1", FLAGS_eager_delete_tensor_gb="0.5")
    code = (
        "from oar import fluid;"
        "print(fluid.get_flags(['FLAGS_check_nan_inf', 'FLAGS_eager_delete_tensor_gb']))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == (
        "{'FLAGS_check_nan_inf': True, 'FLAGS_eager_delete_tensor_gb': 0.5}"
    )
    env["FLAGS_paddle_num_threads"] = "two"
    out = subprocess.run(
        [sys.executable, "-c", "import oar.flags"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode != 0 and "environment variable FLAGS_paddle_num_threads" in out.stderr


def test_paddle_num_threads_sets_blas_threads_when_threadpoolctl_is_installed():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    blas = [i for i in threadpoolctl.threadpool_info() if i.get("user_api") == "blas"]
    if not blas:
        pytest.skip("no BLAS library found by threadpoolctl")
    before = blas[0]["num_threads"]
    try:
        fluid.set_flags({"FLAGS_paddle_num_threads": 1})
        info = [i for i in threadpoolctl.threadpool_info() if i.get("user_api") == "blas"]
        assert all(i["num_threads"] == 1 for i in info)
    finally:
        threadpoolctl.threadpool_limits(limits=before, user_api="blas")
