"""The op conformance suite runs on every registered, available device.

Each test here that takes an OpCase (a ``case`` argument) is parametrised over
``oar.testing.device_places()``, with the place made the default of
``check_case`` while it runs. Besides the installed devices (cpu; cuda where a
plugin provides it), a ``checking`` device is registered for this session: its
array module is ``oar.testing.CheckingArrayModule`` (numpy behind a counting
proxy whose arrays have their own type), and kernels-cpu's array-generic
kernels are registered for it through ``register_generic_kernels``, the same
public function a CUDA plugin calls. A kernel that computes with numpy instead
of its ``xp`` fails there; ops whose kernels say ``generic=False`` are skipped.
"""

from __future__ import annotations

import oar.plugins
import pytest
from oar.errors import KernelNotFoundError
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
        from oar_kernels_cpu import register_generic_kernels

        register_generic_kernels(registry, CHECKING, CHECKING_XP)


if CHECKING not in oar.plugins.registries().devices.names():
    oar.plugins.register(_CheckingDevicePlugin(), name="oar-test-checking-device")


def pytest_generate_tests(metafunc):
    if "case" in metafunc.fixturenames:
        places = device_places()
        metafunc.fixturenames.append("oar_place")
        metafunc.parametrize("oar_place", places, ids=[p.device for p in places], indirect=True)


@pytest.fixture
def oar_place(request):
    place = request.param
    with use_place(place):
        try:
            yield place
        except KernelNotFoundError as exc:
            if place.device == "cpu":
                raise
            pytest.skip(f"not array-generic: {exc}".split("; install")[0])
