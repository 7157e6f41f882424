"""The op conformance suite runs on every registered, available device.

Each test here that takes an OpCase (a ``case`` argument) is parametrised over
``oar.testing.device_places()``, with the place made the default of
``check_case`` while it runs. Besides the installed devices (cpu; cuda where a
plugin provides it), a ``checking`` device is registered for this session: its
array module is ``oar.testing.CheckingArrayModule`` (numpy behind a counting
proxy whose arrays have their own type), and kernels-cpu's array-generic
kernels are registered for it through ``register_generic_kernels``, the same
public function a CUDA plugin calls -- when oar-kernels-cuda is installed, through its
``register_device_kernels`` (generic kernels + host fallbacks for the numpy-only ones), the
very function that registers the ``cuda`` device's kernels. A kernel that computes with numpy
instead of its ``xp`` fails there; without oar-kernels-cuda, ops whose kernels say
``generic=False`` are skipped.
"""

from __future__ import annotations

import oar.plugins
import pytest
from oar.hookspecs import hookimpl
from oar.testing import CheckingArrayModule, checking_device, device_places, use_place

CHECKING = "checking"
CHECKING_XP = CheckingArrayModule()


class _CheckingDevicePlugin:
    @hookimpl
    def oar_register_devices(self, registry):
        registry.register_device(checking_device(CHECKING, CHECKING_XP))

    @hookimpl
    def oar_register_kernels(self, registry):
        try:  # the CUDA plugin's own registration function, so the suite tests that seam
            from oar_kernels_cuda import register_device_kernels
        except ImportError:
            from oar_kernels_cpu import register_generic_kernels

            register_generic_kernels(registry, CHECKING)  # xp from the device: CHECKING_XP
            return
        device = checking_device(CHECKING, CHECKING_XP)
        register_device_kernels(registry, CHECKING, device.to_host, device.from_host)


if CHECKING not in oar.plugins.registries().devices.names():
    oar.plugins.register(_CheckingDevicePlugin(), name="oar-test-checking-device")


def pytest_generate_tests(metafunc):
    if "case" in metafunc.fixturenames:
        places = device_places()
        metafunc.parametrize("oar_place", places, ids=[p.device for p in places], indirect=True)


@pytest.fixture(autouse=True)
def oar_place(request):
    """The device an OpCase test runs on (tests without a ``case`` run as they are)."""
    place = getattr(request, "param", None)
    if place is None:
        yield None
        return
    if place.device != "cpu":
        _skip_unless_kernels(request.getfixturevalue("case"), place.device)
    with use_place(place):
        yield place


def _skip_unless_kernels(case, device):
    """Skip a case whose op has no kernel on ``device`` (numpy-only kernels say generic=False)."""
    reg = oar.plugins.registries()
    if not reg.kernels.devices_for(case.op_type) >= {device}:
        cpu = reg.kernels.lookup(case.op_type, "cpu", None) or next(
            (e for e in reg.kernels.entries() if e.op_type == case.op_type), None
        )
        why = "numpy-only (generic=False)" if cpu is not None and cpu.generic is False else "none"
        pytest.skip(f"{case.op_type}: no kernel on '{device}' ({why})")


@pytest.fixture
def two_threads():
    """oar's CPU math threads set to 2 for the test, the previous setting restored after."""
    from oar import cpu_threads
    from oar.api import set_cpu_math_library_num_threads

    setting, blas = cpu_threads._setting, cpu_threads.blas_num_threads()
    set_cpu_math_library_num_threads(2)
    yield
    cpu_threads._setting = setting
    if blas:
        cpu_threads._apply(blas)
